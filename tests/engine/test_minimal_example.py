"""examples/minimal, the second course: it proves the engine needs nothing of the attention course. Built from the
command line with no model and no corpus anywhere (a machine-wide cache, COURSE_MACHINE_CACHE, that holds only the
Python runtime's prepared files) and an empty cache folder, it has its pages, its math, its code cell's build-time
output, its quiz and its own widget; built again on the warm cache, one page at a time, it is the same bytes (same
input → same bytes)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.runtime.files import runtime_cache_root
from tests.conftest import MINIMAL, ROOT, build


def digest_tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def minimal_cold(tmp_path_factory) -> tuple[Path, Path]:
    """(the site, its cache folder): `python build.py --content examples/minimal` on an empty cache, no model."""
    root = tmp_path_factory.mktemp("minimal")
    machine = root / "machine"
    # only the Python runtime's entries, the tests' shared ones (making them takes minutes; the runtime's own tests,
    # tests/engine/test_python_runtime.py, are about them)
    (machine / "derived").mkdir(parents=True)
    (machine / "derived" / "pyodide").symlink_to(runtime_cache_root())
    env = {**os.environ, "COURSE_MACHINE_CACHE": str(machine)}
    run = subprocess.run(
        [sys.executable, "build.py", "--content", str(MINIMAL), "--out", str(root / "site")]
        + ["--cache-dir", str(root / "cache")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("built 2 pages, 5 formulas"), run.stdout
    assert [p.name for p in machine.iterdir()] == ["derived"], "the minimal course downloaded something"
    assert [p.name for p in (machine / "derived").iterdir()] == ["pyodide"], "the minimal course derived data"
    return root / "site", root / "cache"


@pytest.mark.slow
def test_the_minimal_course_builds_with_no_model_and_no_corpus(minimal_cold):
    site, _ = minimal_cold
    page = (site / "softmax.html").read_text(encoding="utf-8")
    assert page.count('class="katex') >= 3 and "math-error" not in page
    assert 'class="callout callout-key"' in page
    assert "[0.659, 0.242, 0.099]" in page  # the code cell's output, run at build time
    assert 'id="quiz-softmax-sum"' in page
    assert 'id="exercise-softmax-list"' in page  # its exercise, checked by the build
    assert 'data-widget="softmax3"' in page and (site / "assets" / "widget-softmax3.js").is_file()
    assert (site / "assets" / "widgets-softmax3.css").is_file()  # the widget folder's style.css
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="softmax.html"' in index and 'data-slug="next-steps"' in index  # written and planned pages


def test_a_second_build_on_the_warm_cache_one_page_at_a_time_is_the_same_bytes(minimal_cold, tmp_path):
    site, cache = minimal_cold
    again = tmp_path / "again"
    result = build(MINIMAL, again, python_runtime=True, cache_dir=cache, jobs=1)
    assert result.formulas_rendered == 0  # warm: nothing typeset again
    assert digest_tree(again) == digest_tree(site)
