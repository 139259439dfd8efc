"""`python-runtime.js`: theme/js/python/runtime.js (+ the worker, embedded as a string, and
`course_runtime.py`, the in-worker cell executor) bundled into one classic script that exposes
`window.CoursePython`."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from builder.bundle import esbuild_bundle

from .files import write_if_changed

RUNTIME_JS_NAME = "python-runtime.js"


def theme_python_dir(root: Path) -> Path:
    """The browser side of the runtime in the project at `root`: runtime.js, worker.js, …, course_runtime.py."""
    return root / "theme" / "js" / "python"


def bundle_python_runtime(dest: Path, *, root: Path, minify: bool = True) -> Path:
    """Bundle theme/js/python/{runtime.js, worker.js, unpacker.js, course_runtime.py} of the project at `root`
    into `dest/python-runtime.js`."""
    theme_py_dir = theme_python_dir(root)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pyrt-bundle-") as tmp:
        t = Path(tmp)
        worker_out = esbuild_bundle(theme_py_dir / "worker.js", t / "worker.txt", minify=minify,
                                    loaders={".py": "text"})
        unpacker_out = esbuild_bundle(theme_py_dir / "unpacker.js", t / "unpacker.txt", minify=minify)
        entry = t / "entry.js"
        entry.write_text(
            f"import workerSource from {json.dumps(worker_out.as_posix())};\n"
            f"import unpackerSource from {json.dumps(unpacker_out.as_posix())};\n"
            f"import {{ install }} from {json.dumps((theme_py_dir / 'runtime.js').as_posix())};\n"
            "install(workerSource, unpackerSource);\n", "utf-8")
        out = esbuild_bundle(entry, t / RUNTIME_JS_NAME, minify=minify, loaders={".txt": "text"})
        data = out.read_bytes()
    target = dest / RUNTIME_JS_NAME
    write_if_changed(target, data)
    return target
