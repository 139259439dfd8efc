"""Precompiled bytecode: the stdlib zip and the wheels with sourceless .pyc where a start imports a module.

Pyodide ships its stdlib and packages as .py sources, which the browser would tokenise and compile in wasm on
every visit (numpy's ~170 modules alone took ~1 s). The compile runs inside Pyodide itself under Node (the exact
CPython 3.12.7 of the browser, so the bytecode matches): `precompile.cjs` loads it and runs
`precompile_in_pyodide.py`, which installs the wheels, runs a first cell and a first figure with the browser's
own cell runtime, and compiles what they loaded (a .pyc is bigger than a zipped .py, so modules nobody imports at
start stay sources). A measured gain, on public ground: nothing but .pyc files Python itself reads.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .node import node_job

PROGRAM_DIR = Path(__file__).resolve().parent
CELL_RUNTIME = PROGRAM_DIR / "browser" / "cell_runtime.py"
SITE_PACKAGES = "/lib/python3.12/site-packages/"


def precompile(
    out_dir: Path,
    pyodide_dir: Path,
    lock_file: Path,
    stdlib: Path | None,
    wheels: list[tuple[Path, bool]],
    warm: list[str],
) -> bool:
    """Write into `out_dir` (made in one rename) the stdlib zip (if given) and each wheel ((path, compile every
    module)) with .pyc instead of the .py that running the `warm` cells loads, in the Pyodide of `pyodide_dir`
    (with npm pyodide's own `lock_file`). False (and a warning) when Node
    or the compile fails: the runtime then ships the sources, which work, just slower."""
    files = {"/tmp/cell_runtime/cell_runtime.py": str(CELL_RUNTIME)}
    outputs = {}
    main = {"site_packages": SITE_PACKAGES, "cell_runtime_dir": "/tmp/cell_runtime", "warm": warm, "wheels": []}
    main["stdlib"] = {"in": "/tmp/in/stdlib.zip", "out": "/tmp/out/stdlib.zip"}
    files["/tmp/in/stdlib.zip"] = str(stdlib or Path(pyodide_dir) / "python_stdlib.zip")
    outputs["/tmp/out/stdlib.zip"] = "{out}/" + (stdlib.name if stdlib else ".unused-stdlib.zip")
    for i, (wheel, every) in enumerate(wheels):
        files[f"/tmp/in/{i}.whl"] = str(wheel)
        outputs[f"/tmp/out/{i}.whl"] = "{out}/" + wheel.name
        main["wheels"].append({"in": f"/tmp/in/{i}.whl", "out": f"/tmp/out/{i}.whl", "all": every})
    spec = {
        "pyodideDir": str(Path(pyodide_dir).resolve()),
        "lockFile": str(Path(lock_file).resolve()),
        "program": str(PROGRAM_DIR / "precompile_in_pyodide.py"),
        "files": files,
        "outputs": outputs,
        "main": json.dumps(main),
    }

    def finish(out: Path) -> None:
        (out / ".unused-stdlib.zip").unlink(missing_ok=True)

    return node_job(
        out_dir,
        PROGRAM_DIR / "precompile.cjs",
        ["{tmp}/spec.json"],
        "shipping Python sources (a slower first import in the browser)",
        finish,
        files={"spec.json": json.dumps(spec)},
    )


def copy_sources(out_dir: Path, files: list[Path]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copyfile(f, out_dir / f.name)
