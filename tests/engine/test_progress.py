"""Progress on stderr (builder/progress.py): plain lines off a terminal, one line redrawn on a terminal, a closing
summary of where the time went — and none of it reaches the site."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder import progress
from tests.conftest import MINIMAL, ROOT, build

STAGES = [
    "load",
    "page bodies",
    "parse",
    "python runtime",
    "run cells",
    "verify exercises",
    "typeset math",
    "render bodies",
    "check links",
    "assets",
    "search index",
    "KaTeX assets",
    "pages",
    "write",
]


@pytest.fixture
def reporter():
    yield
    progress.disable()


def test_off_a_terminal_a_step_is_plain_lines_at_its_start_each_quarter_and_its_end(reporter) -> None:
    out = io.StringIO()
    progress.enable(out, tty=False)
    with progress.step("running cells", total=8, unit="cells") as step:
        for _ in range(8):
            step.advance()
    with progress.step("a model run"):
        pass
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()
    assert lines[:4] == [
        "running cells (8 cells) …",
        "running cells: 25% (2/8 cells)",
        "running cells: 50% (4/8 cells)",
        "running cells: 75% (6/8 cells)",
    ]
    assert lines[4].startswith("running cells: done (8/8 cells, ") and lines[4].endswith(" s)")
    assert lines[5] == "a model run …" and lines[6].startswith("a model run: done (")
    assert len(lines) == 7


def test_a_step_done_in_one_go_prints_no_quarters_and_a_failed_one_says_it_stopped(reporter) -> None:
    out = io.StringIO()
    progress.enable(out, tty=False)
    with progress.step("typesetting", total=3, unit="formulas") as step:
        step.update(3)
    with pytest.raises(RuntimeError), progress.step("downloading"):
        raise RuntimeError("no network")
    lines = out.getvalue().splitlines()
    assert lines[0] == "typesetting (3 formulas) …" and lines[1].startswith("typesetting: done (3/3 formulas, ")
    assert lines[2] == "downloading …" and lines[3].startswith("downloading: stopped (")


def test_on_a_terminal_a_step_is_one_line_redrawn_in_place_that_ends_as_a_plain_line(reporter) -> None:
    out = io.StringIO()
    progress.enable(out, tty=True)
    with progress.step("compressing", total=4, unit="files") as step:
        step.advance(2)
    text = out.getvalue()
    assert text.startswith("\r\x1b[Kcompressing ░░░░")  # drawn at once, before any part is done
    assert "compressing: done (2/4 files, " in text and text.endswith(" s)\n")
    last = text.rsplit("\r\x1b[K", 1)[1]
    assert last.startswith("compressing: done"), "the live line is cleared before the closing line"


def test_a_transfer_counts_the_bytes_that_appear_in_its_folder_at_most_the_total(reporter, tmp_path) -> None:
    out = io.StringIO()
    progress.enable(out, tty=False)
    with progress.transfer("downloading x", 1000, tmp_path) as step:
        (tmp_path / "tmp").mkdir()
        (tmp_path / "tmp" / "partial").write_bytes(b"\0" * 600)
        (tmp_path / "archive.tgz").write_bytes(b"\0" * 600)  # the finished copy beside the partial one
    assert step.done == 600  # the archive's bytes, not twice them
    with progress.transfer("downloading y", 1000, tmp_path / "tmp") as step:
        (tmp_path / "tmp" / "partial").write_bytes(b"\0" * 1200)  # more than it said: at most the total
    assert step.done == 1000
    assert out.getvalue().splitlines()[0] == "downloading x (0.0 MB) …"


def test_with_progress_off_nothing_is_printed_but_a_download_s_one_line(reporter, tmp_path, capsys) -> None:
    progress.disable()
    with progress.stage("load"), progress.step("running cells", total=2, unit="cells") as step:
        step.advance(2)
    with progress.transfer("downloading x", 10, tmp_path):
        pass
    assert capsys.readouterr().err == "downloading x …\n"
    assert progress.summary() is None


def test_the_summary_gives_each_stage_its_own_seconds_in_the_order_they_ran(reporter) -> None:
    out = io.StringIO()
    reporter = progress.enable(out, tty=False)
    with progress.stage("page bodies"):
        with progress.stage("parse"):
            pass
        with progress.stage("run cells"):
            pass
    with progress.stage("write"):
        pass
    with progress.stage("parse"):  # a stage that runs again adds up
        pass
    assert list(reporter.stages) == ["page bodies", "parse", "run cells", "write"]
    lines = progress.summary().splitlines()
    assert lines[0].startswith("time: ") and lines[0].endswith(" s in all")
    assert [line.split()[0] for line in lines[1:]] == ["page", "parse", "run", "write"]
    assert out.getvalue() == "", "stages print nothing while they run"


@pytest.mark.slow
def test_a_build_off_a_terminal_shows_its_steps_and_where_the_time_went_and_writes_the_same_site(tmp_path) -> None:
    """`build.py` on examples/minimal with stderr a pipe (CI's log): plain lines, the stage summary, and the very
    bytes a build without progress writes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "build.py", "--content", str(MINIMAL), "--out", str(tmp_path / "site")]
        + ["--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert "\r" not in err and "\x1b" not in err
    assert "running the code cells of 1 page in Pyodide (1 cells) …" in err  # a cold cache: the cell runs
    assert "typesetting formulas with KaTeX (5 formulas) …" in err
    summary = err[err.index("time: ") :].splitlines()
    assert summary[0].endswith(" s in all")
    assert [line.rsplit(None, 2)[0].strip() for line in summary[1:]] == STAGES
    assert proc.stdout.startswith("built 2 pages")

    build(MINIMAL, tmp_path / "quiet", cache_dir=tmp_path / "cache", python_runtime=True)
    assert _files(tmp_path / "site") == _files(tmp_path / "quiet")


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
