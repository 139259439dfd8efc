"""Issue 34, item 1: the build never deletes what it did not make. `--out` replaces only a new, empty or previously
built folder (marked with .built-by-course-builder), never the sources, the theme, the cache or the repository;
`--zip` replaces only its own package; an interrupted build's temporary folders do not pile up."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from builder import output
from tests.conftest import ROOT, build

MARKER = ".built-by-course-builder"

PAGE = "---\ntitle: 页面\nslug: page\n---\n## 一节\n正文。\n"
MARKER_TEXT = b"This folder is the output of the course's build"
SITE = "series: 测试系列\ntitle: 测试课程\nkinds:\n  explainer: {title: 讲解}\n"


def run_cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "build.py", "--no-cache", "--no-python", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def assert_refused(run: subprocess.CompletedProcess, out: Path, reason: str) -> None:
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stderr.splitlines() == [f"error: --out {out}: {reason}"], run.stderr
    assert "Traceback" not in run.stderr


@pytest.fixture
def content(make_content) -> Path:
    make_content("site.yml", SITE)
    make_content("page.md", PAGE)
    return make_content.dir


def test_out_at_the_content_folder_is_refused_and_nothing_is_deleted(content):
    before = snapshot(content)
    run = run_cli("--content", content, "--out", content)
    assert_refused(
        run, content, "it is the content folder: the build replaces its output folder as a whole, and would delete it"
    )
    assert snapshot(content) == before


def test_out_at_a_folder_holding_the_content_is_refused(content):
    project = content.parent
    (project / "notes.txt").write_text("mine", encoding="utf-8")
    before = snapshot(project)
    run = run_cli("--content", content, "--out", project)
    assert_refused(
        run,
        project,
        f"it contains the content folder ({content}): the build replaces its output folder as a whole, and would "
        "delete it",
    )
    assert snapshot(project) == before


def test_out_inside_the_content_or_the_theme_is_refused(content, tmp_path):
    theme = shutil.copytree(ROOT / "theme", tmp_path / "theme")
    before = snapshot(content), snapshot(theme)
    run = run_cli("--content", content, "--out", content / "site")
    assert_refused(
        run,
        content / "site",
        f"it lies inside the content folder ({content}): the output must be a folder of its own, outside it",
    )
    run = run_cli("--content", content, "--theme", theme, "--out", theme)
    assert_refused(run, theme, "it is the theme: the build replaces its output folder as a whole, and would delete it")
    assert (snapshot(content), snapshot(theme)) == before


def test_the_repository_and_the_cache_are_refused_without_building():
    options = output.BuildOptions(root=ROOT, cache_dir=ROOT / ".cache", out_dir=ROOT)
    assert output.output_refusal(options) == (
        "it is the project root (the repository): the build replaces its output folder as a whole, and would delete it"
    )
    options = output.BuildOptions(root=ROOT, cache_dir=ROOT / ".cache", out_dir=ROOT.parent)
    assert output.output_refusal(options).startswith(f"it contains the content folder ({ROOT / 'content'})")
    options = output.BuildOptions(root=ROOT, cache_dir=ROOT / ".cache", out_dir=ROOT / ".cache" / "site")
    assert output.output_refusal(options).startswith("it lies inside the cache folder")
    # a new folder of the project beside content/ (as site/ is): what the checks above refuse is not it
    assert (
        output.output_refusal(output.BuildOptions(root=ROOT, cache_dir=ROOT / ".cache", out_dir=ROOT / "new-site"))
        is None
    )


def test_a_strangers_folder_is_refused_and_kept(content, tmp_path):
    out = tmp_path / "photos"
    out.mkdir()
    (out / "holiday.jpg").write_bytes(b"\xff\xd8 not mine to delete")
    run = run_cli("--content", content, "--out", out)
    assert_refused(
        run,
        out,
        f"the folder is not empty and no build made it (it has no {MARKER}): it holds holiday.jpg. The build "
        "replaces its output folder as a whole, so it writes only into a new or empty folder or one it made "
        "itself; choose another --out, or empty this one yourself",
    )
    assert snapshot(out) == {"holiday.jpg": b"\xff\xd8 not mine to delete"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["content", "photos"]


def test_a_regular_file_is_refused_and_left_alone(content, tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("mine", encoding="utf-8")
    run = run_cli("--content", content, "--out", target)
    assert_refused(run, target, "it is a file, not a folder; name a folder (new or empty) for the site")
    assert target.read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["content", "notes.txt"], "no .old-PID left behind"


@pytest.mark.slow
def test_every_output_is_marked_and_a_marked_or_empty_folder_is_replaced(content, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    run = run_cli("--content", content, "--out", empty)
    assert run.returncode == 0, run.stderr
    marker = (empty / MARKER).read_text(encoding="utf-8")
    assert marker.startswith(MARKER_TEXT.decode()) and "replaces the whole folder" in marker
    (empty / "stale.html").write_text("from an older build", encoding="utf-8")
    run = run_cli("--content", content, "--out", empty)
    assert run.returncode == 0, run.stderr
    assert not (empty / "stale.html").exists() and (empty / "page.html").is_file() and (empty / MARKER).is_file()


def test_leftovers_of_interrupted_builds_are_cleaned_but_not_a_strangers(content, tmp_path):
    out = tmp_path / "site"
    gone, kept = dead_pid(), dead_pid()
    for name, marked in ((f".site.new-{gone}", True), (f".site.old-{gone}", True), (f".site.new-{kept}", False)):
        (tmp_path / name / "assets").mkdir(parents=True)
        if marked:
            (tmp_path / name / MARKER).write_bytes(MARKER_TEXT)
    build(content, out, cache_dir=None)
    # the marked ones were the build's own; the unmarked one is not the build's to delete
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".site.new-{kept}", "content", "site"]


def test_a_crash_between_the_two_renames_leaves_the_previous_site(content, tmp_path, monkeypatch):
    out = tmp_path / "site"
    build(content, out, cache_dir=None)
    before = snapshot(out)
    real = Path.rename

    def interrupted(self, target):
        if self.name.startswith(".site.new-"):
            raise KeyboardInterrupt
        return real(self, target)

    monkeypatch.setattr(output.Path, "rename", interrupted)
    (content / "page.md").write_text(PAGE + "新的一段。\n", encoding="utf-8")
    with pytest.raises(KeyboardInterrupt):
        build(content, out, cache_dir=None)
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["content", "site"]


def test_a_previous_site_stranded_by_a_crash_is_put_back(content, tmp_path):
    out = tmp_path / "site"
    build(content, out, cache_dir=None)
    stranded = tmp_path / f".site.old-{dead_pid()}"
    out.rename(stranded)  # what a crash between the two renames of an older build left
    output.clean_leftovers(out)
    assert (out / "page.html").is_file() and not stranded.exists()


@pytest.mark.slow
def test_zip_replaces_only_its_own_package(content, tmp_path):
    out, dist = tmp_path / "site", tmp_path / "dist"
    for _ in range(2):  # the second replaces the first: a build wrote it
        run = run_cli("--content", content, "--out", out, "--zip", "--dist", dist)
        assert run.returncode == 0, run.stderr
    with zipfile.ZipFile(dist / "attention-course.zip") as archive:
        assert "attention-course/page.html" in archive.namelist()
    (dist / "attention-course.zip").write_bytes(b"someone else's")
    run = run_cli("--content", content, "--out", out, "--zip", "--dist", dist)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.splitlines() == [
        f"error: --dist {dist}: {dist / 'attention-course.zip'} exists and no build wrote it: the build replaces only "
        "an offline package it made; move the file away or choose another --dist"
    ]
    assert (dist / "attention-course.zip").read_bytes() == b"someone else's"
    run = run_cli("--content", content, "--out", out, "--zip", "--dist", content)
    assert run.returncode == 1 and "lies inside the content folder" not in run.stderr
    assert run.stderr.startswith(f"error: --dist {content}: it is the content folder")
    assert not (content / "attention-course.zip").exists()


def test_help_says_what_out_and_no_cache_do_and_which_variables_matter():
    text = subprocess.run(
        [sys.executable, "build.py", "--help"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "replaced as a whole" in text and MARKER in text
    assert "what --no-cache skips" in text and "COURSE_MACHINE_CACHE" in text and "derived/pyodide" in text
    for gone in ("COURSE_RUNTIME_DIR", "COURSE_MODEL_DIR", "COURSE_CORPUS_DIR", "COURSE_DOWNLOADS"):
        assert gone not in text
    assert "data sources of attention_course" in text and "smollm2: SmolLM2-135M-Instruct" in text
    assert "OPENBLAS_NUM_THREADS" in text and "node" in text


def test_a_cache_folder_that_is_a_file_is_an_error_not_a_traceback(content, tmp_path):
    target = tmp_path / "cache-file"
    target.write_text("mine", encoding="utf-8")
    run = subprocess.run(
        [
            sys.executable,
            "build.py",
            "--no-python",
            "--content",
            content,
            "--out",
            tmp_path / "site",
            "--cache-dir",
            target,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.splitlines() == [f"error: --cache-dir {target}: it is a file, not a folder"]
    assert target.read_text(encoding="utf-8") == "mine" and not (tmp_path / "site").exists()
