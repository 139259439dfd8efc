"""Runnable code cells: ```{code-cell} python, executed at build time (its own pipeline stage, run.py, in a child
process, executor.py), rendered as highlighted source plus the build-time output (render.py), edited and re-run
in the browser's Pyodide (theme/js/cells/, builder/runtime/browser/)."""

from .executor import PRELUDE, execute_cell, run_cells_in_child
from .render import highlight_cell_source, render_cell
from .run import CellEnvironment, cache_keys, run_cells_of_pages, run_page_cells

__all__ = [
    "CellEnvironment",
    "PRELUDE",
    "cache_keys",
    "execute_cell",
    "highlight_cell_source",
    "render_cell",
    "run_cells_in_child",
    "run_cells_of_pages",
    "run_page_cells",
]
