"""Precompiled bytecode: the stdlib zip and the NumPy wheel with sourceless .pyc instead of .py.

The compile runs inside Pyodide itself (the exact CPython 3.12.7 of the browser, so the bytecode matches):
`precompile.cjs` loads Pyodide under Node and runs `precompile_in_pyodide.py` in it, both files beside this
module.  .py members become sourceless .pyc next to where the .py was.  Importing then skips tokenising and
compiling in wasm (numpy's 174 modules alone took ~1 s of the ~1.3 s `import numpy`).  Every NumPy module
is compiled; of the stdlib only what boot + WARM_IMPORTS load (a .pyc is bigger than a zipped .py, so the
~400 modules nobody imports at start stay small sources).
"""

from __future__ import annotations

from pathlib import Path

from .node import node_job
from .verify import sha256_bytes

PROGRAM_DIR = Path(__file__).resolve().parent  # precompile.cjs, precompile_in_pyodide.py
COMPILE_VERSION = "3"  # bump when precompile_in_pyodide.py or precompile.cjs changes: the cache key includes it
STDLIB_NAME = "python_stdlib.zip"
STDLIB_PREFIX = "/lib/python312.zip/"  # where Pyodide mounts the stdlib zip
SITE_PACKAGES = "/lib/python3.12/site-packages/"  # where loadPackage unpacks wheels
WARM_IMPORTS = "numpy, ast, builtins, io, linecache, sys, time, traceback"  # numpy + course_runtime's imports
# The stdlib modules that importing matplotlib.pyplot and drawing a first figure load (and nothing before them):
# compiled too, else the first figure compiles them from source in wasm (~0.25 s).  Not imported into the memory
# snapshot; tests/unit/test_pyodide_assets.py checks the list is complete.
FIRST_FIGURE_STDLIB = "calendar, decimal, gzip, html.entities, pprint, shlex, uuid"


def precompiled(
    cache_root: Path,
    pyodide_js_dir: Path,
    stdlib: tuple[Path, str],
    numpy: tuple[Path, str],
    warm_imports: str = WARM_IMPORTS,
) -> tuple[Path, Path] | None:
    """(stdlib zip, NumPy wheel) with sourceless .pyc instead of .py, cached by the sources' sha256.

    `stdlib`/`numpy` are (verified file, its sha256).  Runs Pyodide under Node once per new pair of
    sources.  None (and a warning) when Node or the compile fails: the runtime then ships the sources,
    which work, just slower.
    """
    key = sha256_bytes(f"{stdlib[1]} {numpy[1]} {COMPILE_VERSION} {warm_imports}".encode())[:16]
    out_dir = cache_root / "compiled" / key
    outs = (out_dir / stdlib[0].name, out_dir / numpy[0].name)
    if all(p.is_file() for p in outs):
        return outs
    made = node_job(
        out_dir,
        PROGRAM_DIR / "precompile.cjs",
        [
            str(pyodide_js_dir.resolve()),
            str(PROGRAM_DIR / "precompile_in_pyodide.py"),
            str(stdlib[0]),
            f"{{out}}/{stdlib[0].name}",
            str(numpy[0]),
            f"{{out}}/{numpy[0].name}",
            SITE_PACKAGES,
            warm_imports,
        ],
        "shipping Python sources (slower first import in the browser)",
    )
    return outs if made else None
