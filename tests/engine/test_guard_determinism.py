"""Issue 34, items 5 and 6: the same bytes every time, and a moved project keeps its cache.

* The site built with a cold cache and with a warm one, on one BLAS thread and on two, is byte for byte the same
  (the build pins NumPy's BLAS to one thread itself: builder/numerics.py).
* A project moved or copied elsewhere, its cache folder with it, builds again without parsing a page, running a cell,
  typesetting a formula or bundling an asset: every cache key holds the content, not where it lies.

A small course (tests/engine/guard_course.py) stands in for the real one: a formula, a code cell, a widget whose
numbers come from NumPy's BLAS.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from builder import assets, cache, pipeline
from builder.cells import run as cells_run
from builder.katex import site_assets, typeset
from tests.conftest import ROOT
from tests.engine.guard_course import write_course

pytestmark = pytest.mark.timeout(1200)


def files_of(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def build_with_threads(content: Path, out: Path, cache_dir: Path, threads: int) -> None:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    run = subprocess.run(
        [sys.executable, "build.py", "--content", content, "--out", out, "--cache-dir", cache_dir, "--no-python"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr


@pytest.mark.slow
def test_cold_and_warm_cache_on_one_and_two_blas_threads_give_the_same_bytes(tmp_path):
    content = write_course(tmp_path / "content")
    sites = {}
    for name, threads, cache_dir in (
        ("cold-1", 1, tmp_path / "cache-a"),
        ("cold-2", 2, tmp_path / "cache-b"),
        ("warm-1", 1, tmp_path / "cache-b"),  # the cache the two-thread build filled
        ("warm-2", 2, tmp_path / "cache-a"),
    ):
        build_with_threads(content, tmp_path / name, cache_dir, threads)
        sites[name] = files_of(tmp_path / name)
    reference = sites["cold-1"]
    assert "blas-dot" in reference["numbers.html"].decode() and "cell-stdout" in reference["numbers.html"].decode()
    for name, files in sites.items():
        differ = sorted(k for k in reference.keys() | files.keys() if reference.get(k) != files.get(k))
        assert differ == [], f"{name} differs from cold-1 in {differ}"


@pytest.fixture
def counters(monkeypatch) -> dict[str, int]:
    """How much expensive work a build does: pages through the body stages, pages whose cells run, formulas
    typeset, asset bundles made, KaTeX stylesheets and fonts cut."""
    counts = {"pages": 0, "cells": 0, "formulas": 0, "assets": 0, "katex-assets": 0}

    def spy(name, module, attr, amount=lambda args, result: 1):
        real = getattr(module, attr)

        def wrapper(*args, **kwargs):
            result = real(*args, **kwargs)
            counts[name] += amount(args, result)
            return result

        monkeypatch.setattr(module, attr, wrapper)

    spy("pages", pipeline, "body_stages", lambda args, result: len(args[2]))
    spy("cells", cells_run, "_execute")
    spy("formulas", pipeline.katex, "render_all", lambda args, result: result[2])
    spy("formulas", site_assets, "render_all", lambda args, result: result[2])
    spy("assets", assets, "build_assets")
    spy("katex-assets", site_assets, "site_katex_assets")
    return counts


def forget_this_process() -> None:
    """Only the persistent cache may answer: not what this process remembers."""
    cache._memory.clear()
    typeset._memo.clear()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["moved", "copied"])
def test_a_moved_or_copied_project_reuses_its_cache(tmp_path, counters, how):
    forget_this_process()
    project = tmp_path / "first" / "project"
    write_course(project / "content")
    pipeline.build_site(
        pipeline.BuildOptions(
            root=ROOT,
            content_dir=project / "content",
            out_dir=project / "site",
            cache_dir=project / ".cache",
            python_runtime=False,
        )
    )
    assert counters["pages"] == 2 and counters["cells"] == 1 and counters["formulas"] == 1
    before = dict(counters)
    elsewhere = tmp_path / "somewhere" / "else" / "project"
    elsewhere.parent.mkdir(parents=True)
    if how == "moved":
        project.rename(elsewhere)
    else:
        shutil.copytree(project, elsewhere, symlinks=True)
        shutil.rmtree(project)
    forget_this_process()
    result = pipeline.build_site(
        pipeline.BuildOptions(
            root=ROOT,
            content_dir=elsewhere / "content",
            out_dir=elsewhere / "site",
            cache_dir=elsewhere / ".cache",
            python_runtime=False,
        )
    )
    spent = {k: counters[k] - before[k] for k in counters}
    assert spent == {"pages": 0, "cells": 0, "formulas": 0, "assets": 0, "katex-assets": 0}, spent
    assert result.formulas_rendered == 0


def test_every_file_the_load_stage_reads_is_in_its_key(tmp_path):
    """glossary.yml was not: a changed synonym left the search index as it was."""
    content = write_course(tmp_path / "content")
    glossary = content / "glossary.yml"
    options = pipeline.BuildOptions(
        root=ROOT, content_dir=content, out_dir=tmp_path / "site", cache_dir=tmp_path / "cache", python_runtime=False
    )
    for synonym in ("关注", "聚焦"):
        glossary.write_text(f"- term: 注意力\n  synonyms: [{synonym}]\n  definition: 按相关程度加权。\n", "utf-8")
        result = pipeline.build_site(options)
        index = next(v for k, v in result.files.items() if k.startswith("assets/search-index")).decode()
        assert synonym in index, synonym
