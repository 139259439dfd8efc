"""The Python runtime in the site: `assets/python/`, read the same way over http and from file://.

Every file of the `Runtime` (distribution.py) and its `pyodide-lock.json` ship once, as wrapper scripts
(wrappers.py), made once into the cache and hard-linked into the site. `runtime-index.js` lists them for the
page and the worker (builder/runtime/browser/): each asset's name, payload size and sha256, encoding, wrapper
scripts; which the worker fetches at start (`boot`) and which packages it loads before it is ready (`preload`).
python-runtime.js itself is a bundle of the build's one esbuild run (builder/assets.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

from .. import progress
from ..bundle import browser_data_script
from .distribution import LOCK_NAME, Runtime
from .files import runtime_cache_root, write_atomically
from .verify import sha256_bytes
from .wrappers import WRAPPER_CHUNK, cached_wrappers, wrappers_cached

INDEX_NAME = "runtime-index.js"


def runtime_index(runtime: Runtime, cache_dir: Path) -> tuple[dict, dict[str, Path]]:
    """(the runtime index, {file in the site folder: the cached file to link there})."""
    cache_root = runtime_cache_root(cache_dir)
    lock = runtime.lock_bytes()
    lock_file = cache_root / "locks" / f"{sha256_bytes(lock)[:16]}-{LOCK_NAME}"
    if not lock_file.is_file():
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(lock_file, lock)
    sources = {**runtime.files, LOCK_NAME: lock_file}
    assets, links = [], {}
    names = sorted(sources, key=lambda n: (n not in runtime.boot, n))
    fresh = {name for name in names if not wrappers_cached(cache_root, name, sources[name])}
    with contextlib.ExitStack() as stack:
        if fresh:  # zstd -19 of the runtime's files: a minute on a cold cache
            step = stack.enter_context(progress.step("compressing the Python runtime's files", len(fresh), "files"))
        for name in names:
            parts, record = cached_wrappers(cache_root, name, sources[name])
            if name in fresh:
                step.advance()
            links.update({p.name: p for p in parts})
            assets.append(
                {
                    "name": name,
                    **record,
                    "wrappers": [p.name for p in parts],
                    "wrapperSize": sum(p.stat().st_size for p in parts),
                }
            )
    index = {"assets": assets, "chunkBytes": WRAPPER_CHUNK, "boot": runtime.boot, "preload": runtime.preload}
    return index, links


def write_site_runtime(dest: Path, runtime: Runtime, cache_dir: Path) -> dict:
    """The runtime's files into `dest` (assets/python/ of a new site folder); returns the index."""
    index, links = runtime_index(runtime, cache_dir)
    dest.mkdir(parents=True, exist_ok=True)
    for name, src in links.items():
        try:
            os.link(src, dest / name)
        except OSError:  # another file system
            shutil.copyfile(src, dest / name)
    text = json.dumps(index, separators=(",", ":"), sort_keys=True)
    (dest / INDEX_NAME).write_bytes(browser_data_script("python", "index", text))
    return index
