"""`python-runtime.js` for a runtime prepared on its own (tests, tools): the very entry point the site's one
esbuild run bundles (builder/bundle.py) — theme/js/python/runtime.js with the worker and the unpacker inside as
strings — written next to the other runtime files."""

from __future__ import annotations

from pathlib import Path

from builder.bundle import PYTHON_RUNTIME_OUT, bundle_front_end

from .files import write_if_changed

RUNTIME_JS_NAME = "python-runtime.js"


def theme_python_dir(root: Path) -> Path:
    """The browser side of the runtime in the project at `root`: runtime.js, worker.js, …, course_runtime.py."""
    return root / "theme" / "js" / "python"


def bundle_python_runtime(dest: Path, *, root: Path, minify: bool = True) -> Path:
    """Bundle the runtime of the project at `root` into `dest/python-runtime.js`."""
    scripts, _ = bundle_front_end(
        root, root / "theme", widgets={}, python_runtime=True, page_scripts=False, minify=minify
    )
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / RUNTIME_JS_NAME
    write_if_changed(target, scripts[PYTHON_RUNTIME_OUT])
    return target
