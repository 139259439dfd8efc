"""Writing the runtime's files safely: atomic replaces through per-process temporary names, and no
rewrite (or copy) of a file that already has the right bytes (or the source's size and mtime)."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

from ..cache import derived_dir


def runtime_cache_root(cache_dir: Path | None = None) -> Path:
    """Where the runtime's cache entries live (wheels, packs, fonts, bytecode, the snapshot, wrapper scripts):
    `<machine cache>/derived/pyodide` (builder/cache.py `machine_cache`), whatever the build's own cache folder
    `cache_dir` is. Every entry is named by a digest of its inputs, so every build on the machine shares them."""
    return derived_dir("pyodide")


def temp_name(path: Path) -> Path:
    """A temporary sibling unique to this process and thread: parallel builds (e.g. two test workers with one
    cold .cache) write the same cached files, and a shared `.part` name let one rename the other's file away."""
    return path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")


def write_atomically(path: Path, data: bytes) -> None:
    tmp = temp_name(path)
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_if_changed(path: Path, data: bytes) -> None:
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return
    except OSError:
        pass
    write_atomically(path, data)


def copy_if_stale(src: Path, out: Path) -> None:
    """Copy src → out (keeping src's mtime) unless out already has src's size and mtime."""
    st = src.stat()
    try:
        ot = out.stat()
        if ot.st_size == st.st_size and ot.st_mtime_ns == st.st_mtime_ns:
            return
    except OSError:
        pass
    tmp = temp_name(out)
    shutil.copyfile(src, tmp)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, out)
