"""TEMPORARY shim (issue 13): moved to builder/runtime/completions.py.  Re-exports only what
builder/assets.py imports today; delete once it imports builder.runtime."""
from builder.runtime import completions_script

__all__ = ["completions_script"]
