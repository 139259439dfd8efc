"""Module 08, the hands-on page, run natively as a reader would run it in the browser: every cell and every exercise
in page order, each exercise with its reference solution handed to the page's namespace the way a passing attempt is
(exercise_runtime.define), the cells that await run with asyncio. Then:

- the page's training cells are the build's reference runs (attention_course/hands_on/reference_runs.py): the same
  curves point for point, so the page's settings and the numbers its prose quotes cannot drift apart;
- the induction task crosses its threshold and the head the page draws is an induction head;
- the prose's explanation of the first stretch of the curve is right: a model that knows only "one of the letters
  seen" scores the quoted loss;
- the poem slice's perplexities stay close to the whole held-out set's (what the page and its quiz say).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import inspect
import io
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from markdown_it import MarkdownIt

from attention_core import training
from attention_course.hands_on import reference_runs
from builder.cells.executor import CELL_RUNTIME, EXERCISE_RUNTIME
from builder.cells.exercise_harness import define_code
from builder.content import load_page
from builder.errors import Problems
from builder.markdown.code_cell import code_cell_plugin
from builder.markdown.exercise import exercise_plugin
from builder.model import BuildOptions, Cell, ParseContext
from builder.numerics import one_blas_thread
from tests.conftest import ROOT

PAGE = ROOT / "content" / "module-08-build-transformer.md"
pytestmark = pytest.mark.slow


def _module(name: str, path: Path):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def page_items() -> list:
    """The page's cells and exercises in page order, parsed by the engine's own plugins."""
    problems = Problems()
    page = load_page(PAGE, ROOT, problems)
    md = MarkdownIt("commonmark")
    code_cell_plugin(md, render=lambda cell, first: "")
    exercise_plugin(md, render=lambda block, env, md: "")
    context = ParseContext(page.rel, page.body_line, problems)
    md.parse(page.body, context.env())
    assert not problems, [str(p) for p in problems.sorted()]
    return sorted([*context.cells, *context.exercises], key=lambda item: item.token.map[0])


@pytest.fixture(scope="module")
def poems_package(tmp_path_factory):
    """The browser package tang_poems with the files the build makes for it, importable here."""
    from attention_course.poems.browser_data import package_files

    folder = tmp_path_factory.mktemp("packages") / "tang_poems"
    shutil.copytree(ROOT / "attention_course" / "browser" / "tang_poems", folder)
    for name, data in package_files(BuildOptions(root=ROOT, cache_dir=None)).items():
        (folder / name).write_bytes(data)
    sys.path.insert(0, str(folder.parent))
    sys.modules.pop("tang_poems", None)
    yield folder
    sys.path.remove(str(folder.parent))
    sys.modules.pop("tang_poems", None)


@pytest.fixture(scope="module")
def run_page(poems_package):
    """Run the whole page; returns (namespace, {cell id: what it printed})."""
    cells = _module("cell_runtime", CELL_RUNTIME)
    exercises = _module("exercise_runtime", EXERCISE_RUNTIME)
    namespace: dict = {"__name__": "__main__"}
    printed: dict[str, str] = {}
    with one_blas_thread():  # as the build: the same floats as its reference runs
        run_items(page_items(), cells, namespace, printed)
    assert exercises is not None
    return namespace, printed


def run_items(items, cells, namespace: dict, printed: dict) -> None:
    for item in items:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            if isinstance(item, Cell):
                cells.begin_run()
                shown = cells.execute_notebook_cell(item.code, item.filename, namespace, 10_000)
                if inspect.iscoroutine(shown):
                    asyncio.run(shown)
            else:
                exec(compile(define_code(item), f"<define-{item.id}>", "exec"), namespace)
                assert all(name in namespace for name in item.defines), item.id
        if isinstance(item, Cell):
            printed[item.id] = out.getvalue()


def test_the_induction_cell_is_the_reference_run_and_crosses_the_threshold(run_page):
    namespace, printed = run_page
    reference = reference_runs.results("induction")
    assert namespace["curve"].points == reference["points"]  # every point of the three series
    assert namespace["found"] == reference["crossed"] is not None
    assert f"第 {reference['crossed']} 步" in printed["train-induction"]


def test_the_head_the_page_draws_is_an_induction_head(run_page):
    namespace, printed = run_page
    scores = namespace["scores"]
    assert scores.max() >= reference_runs.INDUCTION_SCORE
    assert "最后一层各头的归纳得分" in printed["induction-head"]


def test_the_poem_cells_are_the_reference_run(run_page):
    namespace, printed = run_page
    reference = reference_runs.results("poems")
    assert namespace["poem_curve"].points[0] == reference["points"][0]
    assert np.exp(namespace["nll"]) == pytest.approx(reference["ppl"], rel=1e-9)
    assert "你的 Transformer" in printed["poem-perplexity"]
    assert printed["poem-sample"].strip()


def test_one_of_the_letters_seen_scores_the_loss_the_prose_quotes():
    """A model that spreads its guess evenly over the segment's other letters (it knows the next letter was seen,
    not which one) has the loss `seen_letter_loss` on the copyable positions, measured on fresh batches."""
    task = training.RepeatTask(**{**reference_runs.INDUCTION["task"], "seed": 5})
    losses = []
    for _ in range(40):
        x, y, copyable = task.batch(64)
        for row in range(len(x)):
            period = int(np.argmax(copyable[row]))  # the first copyable position is the period
            losses += [np.log(period - 1)] * int(copyable[row].sum())
    assert np.mean(losses) == pytest.approx(reference_runs.seen_letter_loss(), rel=0.02)


def test_the_slice_scores_the_models_almost_as_the_whole_held_out_set():
    quotes = reference_runs.reference_curve("poems")["quotes"]
    assert float(quotes["poems slice_gap"].rstrip("%")) < 3.0


def test_the_times_the_page_quotes_were_measured_in_every_engine_and_transport_and_as_a_phone():
    """The page's training times come from bench/training_bench.py's medians (browser_timings.json), taken in
    Chromium, Firefox and WebKit over http and file://, and in the phone profile; each within the issue's budgets."""
    timings = reference_runs._timings()
    desktop = timings["desktop"]["medians"]
    assert set(desktop) == {f"{e} {t}" for e in ("chromium", "firefox", "webkit") for t in ("http", "file")}
    assert timings["phone"]["medians"] and timings["desktop"]["runs"] >= 3 and timings["phone"]["runs"] >= 3
    for key, m in desktop.items():
        assert m["induction_threshold_s"] <= (30 if key.startswith("chromium") else 60), key
        assert m["poem_first_point_s"] <= 2, key
    quotes = reference_runs.reference_curve("induction")["quotes"]
    assert quotes["induction desktop_done_s"] and quotes["induction phone_done_s"]
