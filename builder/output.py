"""Writing the site: everything goes into a fresh temporary folder that is then swapped into place, so a
failed build leaves the previous site intact — but unchanged files are hard links to the previous site's
files instead of copies (a rebuild does not rewrite 30 MB of Python runtime).

A hard link shares its bytes with the previous site, so nothing here ever writes *into* an existing file:
a changed file is always a new file (unlink, then write). Writers that add large outputs (the Python
runtime) may set `writer.reuse_dir = "assets/python"`: that folder of the previous site is hard-linked into
the new one before the writer runs, and the writer only replaces what changed (it must replace files with
`os.replace`, never write into them).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        if path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False


def _link_or_copy(src: Path, dest: Path) -> None:
    try:
        os.link(src, dest)
    except OSError:  # another file system, or links not supported: copy
        shutil.copy2(src, dest)


def link_tree(src: Path, dest: Path) -> int:
    """Hard-link every file of `src` into `dest` (same relative paths). Returns the number of files."""
    n = 0
    for folder, dirs, names in os.walk(src):
        rel = Path(folder).relative_to(src)
        (dest / rel).mkdir(parents=True, exist_ok=True)
        for name in names:
            _link_or_copy(Path(folder) / name, dest / rel / name)
            n += 1
    return n


def write_site(
    files: dict[str, bytes], out_dir: Path, writers: list[Callable[[Path], None]] | None = None
) -> dict[str, int]:
    """Write `files` (+ what `writers` add) as the new `out_dir`, atomically replacing the old one.

    Returns counts: {"linked": unchanged files re-used from the previous site, "written": files written}.
    """
    out_dir = out_dir.resolve()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.parent / f".{out_dir.name}.new-{os.getpid()}"
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    stats = {"linked": 0, "written": 0}
    try:
        for writer in writers or []:
            reuse = getattr(writer, "reuse_dir", None)
            if reuse and (out_dir / reuse).is_dir():
                stats["linked"] += link_tree(out_dir / reuse, tmp / reuse)
        made: set[Path] = {tmp}
        for rel, data in sorted(files.items()):
            path = tmp / rel
            if path.parent not in made:
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            if path.exists():  # a hard link seeded above: never write through it
                path.unlink()
            previous = out_dir / rel
            if _same_bytes(previous, data):
                _link_or_copy(previous, path)
                stats["linked"] += 1
            else:
                path.write_bytes(data)
                stats["written"] += 1
        for writer in writers or []:
            writer(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if out_dir.exists():
        out_dir.rename(old)
    tmp.rename(out_dir)
    shutil.rmtree(old, ignore_errors=True)
    return stats
