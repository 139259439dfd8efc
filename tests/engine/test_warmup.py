"""The runtime warm-up of a cold build (builder/runtime/warmup.py): started only when the cache has not been warmed
for the current inputs, waited for in two steps (the cells' runtime first), ended when the build stops early."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from builder.runtime import warmup
from tests.conftest import ROOT
from tests.engine.warmup_job import slow_job


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.delenv("COURSE_RUNTIME_DIR", raising=False)  # this folder's own runtime entries
    yield tmp_path / "cache"
    warmup.cancel()


def marks(cache: Path) -> list[str]:
    return sorted(p.name.rsplit("-", 1)[1] for p in (cache / "pyodide").glob("warmed-*"))


def test_a_cold_cache_is_warmed_in_a_second_process_and_the_cells_part_is_waited_for_alone(cache):
    warmup.start(cache_dir=cache, project_root=ROOT, pyodide_dir=None, site_runtime=True, job=slow_job)
    t = time.perf_counter()
    warmup.wait(cells_only=True)
    assert time.perf_counter() - t < 2.5 and marks(cache) == ["cells"]
    warmup.wait()
    assert marks(cache) == ["cells", "site"]


def test_a_warm_cache_starts_nothing(cache):
    warmup.remember(cache_dir=cache, project_root=ROOT, pyodide_dir=None, site_runtime=True)
    warmup.start(cache_dir=cache, project_root=ROOT, pyodide_dir=None, site_runtime=True, job=slow_job)
    assert warmup._process is None
    # a site build needs the site's part: a cache warmed for the cells only is cold for it
    other = cache.parent / "other"
    warmup.remember(cache_dir=other, project_root=ROOT, pyodide_dir=None, site_runtime=False)
    warmup.start(cache_dir=other, project_root=ROOT, pyodide_dir=None, site_runtime=False, job=slow_job)
    assert warmup._process is None
    warmup.start(cache_dir=other, project_root=ROOT, pyodide_dir=None, site_runtime=True, job=slow_job)
    assert warmup._process is not None


def test_a_build_that_stops_early_ends_its_warm_up(cache):
    warmup.start(cache_dir=cache, project_root=ROOT, pyodide_dir=None, site_runtime=True, job=slow_job)
    process = warmup._process
    warmup.wait(cells_only=True)
    warmup.cancel()
    assert not process.is_alive() and warmup._process is None and marks(cache) == ["cells"]
