"""Running Pyodide under Node at build time (the bytecode precompile)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path


def node_job(
    out_dir: Path,
    program: Path,
    args: list[str],
    what: str,
    finish: Callable[[Path], None] | None = None,
    *,
    files: dict[str, str] | None = None,
) -> bool:
    """Run Pyodide under Node to make a cache entry: `node <program> <args…>` runs with `{tmp}` in args and in
    `files` (name → text, written into it) standing for a temporary directory next to `out_dir` and `{out}` for
    the output folder in it, `finish(out)` post-processes the output, and the folder becomes `out_dir` in one
    rename (a concurrent build that got there first wins).  False, with a warning saying `what` happens
    instead, when Node is missing or the run fails."""
    node = shutil.which("node")
    if not node:
        print(f"warning: node not found: {what}", file=sys.stderr)
        return False
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=out_dir.parent.name + "-", dir=out_dir.parent) as tmp:
        t = Path(tmp)
        out = t / "out"
        for name, text in (files or {}).items():
            (t / name).write_text(text.replace("{out}", str(out)).replace("{tmp}", str(t)), "utf-8")
        out.mkdir()
        proc = subprocess.run(
            [node, str(program), *(a.replace("{out}", str(out)).replace("{tmp}", str(t)) for a in args)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            print(f"warning: Pyodide under Node failed ({what}):\n{proc.stderr.strip()[-2000:]}", file=sys.stderr)
            return False
        if finish:
            finish(out)
        try:
            os.replace(out, out_dir)
        except OSError:  # another build finished it first
            pass
    return True
