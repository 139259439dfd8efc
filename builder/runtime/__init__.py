"""The Python runtime: Pyodide 0.27.7 on its public API, for the browser and for the build's code cells.
distribution (the files, verified and prepared) · site (them in assets/python/) · precompile (bytecode) ·
fonts (matplotlib's) · wheels · wrappers (each file's one shipped form) · completions (the editor's data) ·
browser/ (the worker, the page's API and the cells' Python executor). Import from here, not from the modules."""

from .completions import completions_script
from .distribution import LOCK_NAME, Runtime, pyodide_source, python_runtime
from .site import INDEX_NAME, runtime_index, write_site_runtime
from .verify import RuntimeAssetError, load_manifest
from .wrappers import WRAPPER_CHUNK, read_asset

__all__ = [
    "INDEX_NAME",
    "LOCK_NAME",
    "WRAPPER_CHUNK",
    "Runtime",
    "RuntimeAssetError",
    "completions_script",
    "load_manifest",
    "pyodide_source",
    "python_runtime",
    "read_asset",
    "runtime_index",
    "write_site_runtime",
]
