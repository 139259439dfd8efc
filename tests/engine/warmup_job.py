"""A stand-in for the runtime warm-up's job (tests/engine/test_warmup.py), in a module of its own: the spawned process
imports it, and it must not import tests/conftest.py (which points the runtime's cache at the tests' shared one)."""

from __future__ import annotations

import time
from pathlib import Path

from builder.runtime import warmup


def slow_job(cache_dir: str, project_root: str, pyodide_dir: str | None, site_runtime: bool) -> None:
    """The cells' part at once, the site's 3 s later."""
    root = Path(project_root)
    warmup.remember(cache_dir=Path(cache_dir), project_root=root, pyodide_dir=None, site_runtime=False)
    time.sleep(3)
    warmup.remember(cache_dir=Path(cache_dir), project_root=root, pyodide_dir=None, site_runtime=True)
