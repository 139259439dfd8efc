"""TEMPORARY shim (issue 13): the Python runtime moved to builder/runtime/.  Re-exports only what
builder/assets.py imports today, with the signatures it calls; delete once it imports builder.runtime."""
from __future__ import annotations

from pathlib import Path

from builder import runtime
from builder.runtime import RUNTIME_JS_NAME, prepare_python_runtime

__all__ = ["RUNTIME_JS_NAME", "bundle_python_runtime", "prepare_python_runtime"]


def bundle_python_runtime(dest: Path, *, minify: bool = True) -> Path:
    """builder.runtime.bundle_python_runtime for this repository (assets.py passes no root)."""
    return runtime.bundle_python_runtime(dest, root=Path(__file__).resolve().parent.parent, minify=minify)
