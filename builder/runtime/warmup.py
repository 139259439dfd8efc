"""The runtime's cache entries made in a second process while the build parses the pages.

A cold build spends about a minute on the Python runtime (the CJK font subset, matplotlib's bytecode and the
memory snapshot under Node, the packs and their wrapper scripts) and about as long on the pages' own data (the
real model's forward passes, module 04's MLP). Neither needs the other, so on a cold cache `start()` makes the
runtime's entries in a spawned process on the other core, and `wait()` — which the build calls before its own
`cell_runtime()` and `prepare_python_runtime()` — lets those find them there instead of making them again.

Only a cold cache pays for the process: `start()` does nothing when the cache holds a `warmed-<fingerprint>` mark of
the same inputs (the runtime's code, the pinned manifest, the Pyodide files, the course's Python, attention_core).
The warm-up never reports anything: whatever it did not make, the build makes, and reports, itself.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from multiprocessing import get_context
from pathlib import Path

from .files import runtime_cache_root

HERE = Path(__file__).resolve().parent
_process = None  # the warm-up in progress (a spawned, daemonic process)
_cells_mark: Path | None = None  # written by the warm-up once the cells' runtime is made


def fingerprint(project_root: Path, pyodide_dir: Path | None) -> str:
    """Cheap digest of what the runtime's cache entries are made from: file contents of the code, (name, size,
    mtime) of the large Pyodide files."""
    h = hashlib.sha256()
    sources = sorted(
        [
            *HERE.glob("*.py"),
            *HERE.glob("*.cjs"),
            *HERE.glob("*.json"),
            *(project_root / "theme" / "js" / "python").glob("*"),
            *(project_root / "attention_core").rglob("*.py"),
        ]
    )
    for path in sources:
        if path.is_file():
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    src_dir = Path(pyodide_dir) if pyodide_dir is not None else project_root / "node_modules" / "pyodide"
    for path in sorted(src_dir.glob("*")) if src_dir.is_dir() else []:
        st = path.stat()
        h.update(f"{path.name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def _mark(cache_dir: Path, project_root: Path, pyodide_dir: Path | None, what: str) -> Path:
    """`what`: "cells" (the build-time cells' runtime) or "site" (that and the site's runtime)."""
    return runtime_cache_root(cache_dir) / f"warmed-{fingerprint(project_root, pyodide_dir)}-{what}"


def _warm(cache_dir: str, project_root: str, pyodide_dir: str | None, site_runtime: bool) -> None:
    """(In the spawned process.) The cells' runtime and, with `site_runtime`, the site's, into the cache."""
    from .cell_env import cell_runtime
    from .prepare import prepare_python_runtime

    cache, root = Path(cache_dir), Path(project_root)
    pyodide = Path(pyodide_dir) if pyodide_dir else None
    try:
        cell_runtime(cache_dir=cache, project_root=root, pyodide_dir=pyodide)
        remember(cache_dir=cache, project_root=root, pyodide_dir=pyodide, site_runtime=False)
        if site_runtime:
            scratch = runtime_cache_root(cache)
            scratch.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix="warmup-", dir=scratch) as tmp:
                prepare_python_runtime(Path(tmp), cache_dir=cache, pyodide_dir=pyodide, project_root=root)
    except Exception:  # noqa: BLE001 - the build's own call makes it again and reports the problem
        return
    remember(cache_dir=cache, project_root=root, pyodide_dir=pyodide, site_runtime=site_runtime)


def start(
    *, cache_dir: Path | None, project_root: Path, pyodide_dir: Path | None, site_runtime: bool, job=None
) -> None:
    """Begin the warm-up unless the cache is warm for these inputs (or there is no cache, or one is running).
    `job`: what the process runs instead of the real warm-up (tests), called with the same arguments."""
    global _process, _cells_mark
    if cache_dir is None or _process is not None:
        return
    if _mark(cache_dir, project_root, pyodide_dir, "site").exists() or (
        not site_runtime and _mark(cache_dir, project_root, pyodide_dir, "cells").exists()
    ):
        return
    _cells_mark = _mark(cache_dir, project_root, pyodide_dir, "cells")
    _process = get_context("spawn").Process(
        target=job or _warm,
        args=(str(cache_dir), str(project_root), str(pyodide_dir) if pyodide_dir else None, site_runtime),
        daemon=True,
        name="runtime-warmup",
    )
    _process.start()


def wait(*, cells_only: bool = False) -> None:
    """Block until a warm-up in progress has finished (whatever its outcome: the caller makes what is missing), or
    with `cells_only` until it has made the cells' runtime (it goes on with the site's, which the cells do not need)."""
    global _process
    if _process is None:
        return
    if cells_only:
        while _process.is_alive() and not (_cells_mark and _cells_mark.exists()):
            time.sleep(0.05)
        return
    _process.join()
    _process = None


def cancel() -> None:
    """A build that stopped before it needed the runtime: end its warm-up (every cache entry is written by an
    atomic rename, so an interrupted one is simply not there)."""
    global _process
    if _process is not None:
        if _process.is_alive():
            _process.terminate()
        _process.join()
        _process = None


def remember(*, cache_dir: Path | None, project_root: Path, pyodide_dir: Path | None, site_runtime: bool) -> None:
    """The runtime's entries are in the cache: a later build need not warm them up."""
    if cache_dir is not None:
        mark = _mark(cache_dir, project_root, pyodide_dir, "site" if site_runtime else "cells")
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
