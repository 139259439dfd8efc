"""Shared fixtures: project paths, a helper that builds a site from a content folder, and the builds a whole test run
shares (the real course, the widget fixture sites), each made once per run and read by every worker.

The layout (docs/architecture.md, "Tests"):

- tests/engine/  the engine (builder/, theme/) against examples/minimal and small fixtures: no model, corpus or browser;
- tests/course/  the attention course: attention_core's maths, the real model and the poems' models, the widgets'
                 data, and the real course's build (`course_site`, built once per run);
- tests/e2e/     the browser, against the shared builds.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from builder.errors import BuildFailed  # noqa: E402
from builder.model import BuildOptions, BuildResult  # noqa: E402
from builder.pipeline import build_site  # noqa: E402

TEST_CACHE = ROOT / ".test-cache"
"""The tests' own persistent build cache (typeset formulas, pages): never the developer's .cache, so a test can neither
use nor spoil what `make site` made."""
# Every build a test makes, whatever its cache folder, finds the downloads and what is derived from them through
# TEST_CACHE (builder/cache.py `machine_cache`). Spawned worker processes inherit it.
_MACHINE = (
    None
    if "COURSE_MACHINE_CACHE" in os.environ
    else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "attention-course")
)
os.environ.setdefault("COURSE_MACHINE_CACHE", str(TEST_CACHE))


def _share_machine_cache(cache: Path, machine: Path) -> None:
    """The tests' machine-wide cache is the machine's (`<XDG cache>/attention-course`, where `make site` keeps it
    too): `downloads/`, pinned files named by their sha256 and checked on every use, and `derived/`, results named by
    digests of their inputs and code (the prepared Python runtime, the model's runs, the poem models) — which a test
    can neither spoil nor be misled by (a test that tampers with such a file has a machine cache of its own). So a
    fresh clone's run fetches and computes nothing the machine already has."""
    for part in ("downloads", "derived"):
        link = cache / part
        if link.exists() or link.is_symlink():
            continue
        (machine / part).mkdir(parents=True, exist_ok=True)
        cache.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            link.symlink_to(machine / part, target_is_directory=True)


if _MACHINE is not None:
    _share_machine_cache(TEST_CACHE, _MACHINE)

CONTENT = ROOT / "content"
"""The real course (its site.yml names the course package: attention_course)."""
MINIMAL = ROOT / "examples" / "minimal"
"""The second, tiny course (course: minimal_course, beside its pages): what the engine tests build."""


def build(
    content_dir: Path,
    out_dir: Path,
    *,
    python_runtime: bool = False,
    cache_dir: Path | None = None,
    jobs: int | None = None,
) -> BuildResult:
    """Build `content_dir` into `out_dir` with the real theme; raises BuildFailed."""
    return build_site(
        BuildOptions(
            root=ROOT,
            content_dir=content_dir,
            theme_dir=ROOT / "theme",
            out_dir=out_dir,
            cache_dir=cache_dir if cache_dir is not None else TEST_CACHE,
            python_runtime=python_runtime,
            jobs=jobs,
        )
    )


SITE_YML = (
    "series: 测试系列\ntitle: 测试课程\n{course}"
    "kinds:\n  module: {{title: 课程模块, label: 模块, numbered: true}}\n  explainer: {{title: 图解专题}}\n"
    "planned:\n  - {{slug: coming, title: 即将推出的页面, kind: explainer}}\n"
)


@pytest.fixture
def make_content(tmp_path: Path):
    """Create a minimal valid content folder (no course package: the engine alone) and return a writer for extra or
    overridden files; `make_content.use_course("attention_course")` makes site.yml name a course."""
    content = tmp_path / "content"
    content.mkdir()
    (content / "site.yml").write_text(SITE_YML.format(course=""), encoding="utf-8")
    (content / "index.md").write_text("---\ntitle: 首页\nkind: index\n---\n欢迎。\n", encoding="utf-8")

    def write(name: str, text: str) -> Path:
        path = content / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def use_course(name: str) -> None:
        (content / "site.yml").write_text(SITE_YML.format(course=f"course: {name}\n"), encoding="utf-8")

    write.dir = content  # type: ignore[attr-defined]
    write.use_course = use_course  # type: ignore[attr-defined]
    return write


def copy_content(dest: Path, source: Path = CONTENT) -> Path:
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


__all__ = [
    "CONTENT",
    "MINIMAL",
    "ROOT",
    "TEST_CACHE",
    "BuildFailed",
    "all_widgets",
    "build",
    "copy_content",
    "shared_site",
]


def run_js_module(tmp_path: Path, modules: dict[str, Path], script: str, data: object = None):
    """Run `script` as an ES module in Node inside `tmp_path`, with each theme module copied in under its given
    .mjs name (theme files are plain .js, which Node would read as CommonJS) and `data` as ./data.json; returns
    the JSON the script writes to stdout. A course's widget module imports the theme's helpers as `@theme/…`
    (builder/bundle.mjs resolves that); here they resolve to the copies beside it, by their file name."""
    import json
    import re
    import subprocess

    for name, source in modules.items():
        text = source.read_text(encoding="utf-8")
        text = re.sub(r'from "@theme/(?:[\w-]+/)*([\w-]+)\.js"', r'from "./\1.js"', text)
        (tmp_path / name).write_text(text, encoding="utf-8")
    if data is not None:
        (tmp_path / "data.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)


# ------------------------------------------------------------------------------------------ builds a run shares

BUILD_LIMIT_S = 1500
"""How long a shared build may take: a cold build of the real course (the Python runtime made, every cell run in
Pyodide, the model's and the corpus' results computed) took ~6 min on 2 busy cores; past this it is stuck, and the
tests that need it fail naming it."""


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (fcntl.flock), held by one test process of the run at a time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_folder(config: pytest.Config) -> Path:
    """A folder of this test run that all its pytest-xdist workers see: beside the workers' base temporary folders
    (pytest-of-<user>/pytest-<n>/popen-gw0, …), keyed by xdist's testrun uid (the same in every worker of one run,
    a new one per run)."""
    factory = config._tmp_path_factory  # type: ignore[attr-defined]  # pytest's own, shared by tmp_path_factory
    base = factory.getbasetemp()
    worker = getattr(config, "workerinput", None)
    uid = worker["testrunuid"] if worker else _local_uid(config)
    return (base.parent if worker else base) / f"shared-{uid}"


def _local_uid(config: pytest.Config) -> str:
    import uuid

    if not hasattr(config, "_course_test_uid"):
        config._course_test_uid = uuid.uuid4().hex  # type: ignore[attr-defined]
    return config._course_test_uid  # type: ignore[attr-defined]


class SharedBuilds:
    """The builds a test run shares, each made once for all its workers in a background process of its own
    (tests/shared_build_job.py): started as soon as a worker has collected a test that needs it (so it runs while the
    tests that do not need it run), and waited for by the fixture that returns its folder. A failed build is reported
    to every test that needs it (its problems are kept in the run folder), not tried again by each worker. The sites
    are shared: tests read them, never write to them (a test that needs a changed site copies or overlays it:
    tests/e2e/conftest.py `overlay`)."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.started: list = []  # the build processes this test process started (ended at the end of the run)

    def folder(self, name: str) -> Path:
        return run_folder(self.config) / name

    def start(self, name: str, content: Callable[[Path], Path], *, python_runtime: bool) -> Path:
        """Start build `name` unless a worker of this run has: `content(folder)` returns the content folder to build
        (made under the lock, once)."""
        import subprocess
        import time

        folder = self.folder(name)
        with _locked(folder.with_name(f"{name}.lock")):
            if (folder / "started.txt").exists():
                return folder
            folder.mkdir(parents=True, exist_ok=True)
            source = content(folder)
            command = [sys.executable, "-m", "tests.shared_build_job", str(source), str(folder)]
            log = open(folder / "build.log", "w", encoding="utf-8")  # noqa: SIM115 - the child writes it
            process = subprocess.Popen(
                [*command, *(["--python"] if python_runtime else [])], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT
            )
            log.close()
            self.started.append(process)
            (folder / "started.txt").write_text(f"{process.pid} {time.time()}\n", encoding="utf-8")
        return folder

    def wait(self, name: str) -> Path:
        """The built site of `name` (started by now): its folder once the build has ended well, else the test fails
        with the build's problems."""
        import time

        folder = self.folder(name)
        pid, started = (folder / "started.txt").read_text(encoding="utf-8").split()
        deadline = float(started) + BUILD_LIMIT_S
        while not (folder / "built.txt").exists():
            if (folder / "failed.txt").exists():
                pytest.fail(f"the shared build '{name}' failed:\n{(folder / 'failed.txt').read_text('utf-8')}", False)
            if time.time() > deadline or not _alive(int(pid)):
                if (folder / "built.txt").exists() or (folder / "failed.txt").exists():
                    continue
                log = (folder / "build.log").read_text(encoding="utf-8", errors="replace")[-4000:]
                why = "took more than {BUILD_LIMIT_S} s" if time.time() > deadline else "ended without a result"
                pytest.fail(f"the shared build '{name}' {why.format(BUILD_LIMIT_S=BUILD_LIMIT_S)}:\n{log}", False)
            time.sleep(0.2)
        return folder / "site"

    def close(self) -> None:
        for process in self.started:
            if process.poll() is None:  # nobody is left to read it
                process.kill()
            process.wait()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _course_content(folder: Path) -> Path:
    return CONTENT


def _minimal_content(folder: Path) -> Path:
    return MINIMAL


def _widget_fixtures_of(content_dir: Path) -> Callable[[Path], Path]:
    def content(folder: Path) -> Path:
        from tests.widget_fixtures import fixture_content

        return fixture_content(content_dir, folder / "content")

    return content


SHARED_BUILDS: dict[str, tuple[Callable[[Path], Path], bool]] = {
    # the real course, with the Python runtime: the course's build tests and every browser test read it
    "course_site": (_course_content, True),
    # examples/minimal, the engine's second course, with the Python runtime: its page in the browser
    "minimal_site": (_minimal_content, True),
    # one page per widget folder of each course, its fixture.md (tests/widget_fixtures.py)
    "minimal_widget_site": (_widget_fixtures_of(MINIMAL), False),
    "course_widget_site": (_widget_fixtures_of(CONTENT), False),
}
"""The builds a run shares, by the fixture that returns each: fixture name → (its content folder, given the build's
own folder; whether it has the Python runtime)."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "shared_build: reads a build the run shares (added to every test that uses one; not in test-fast)"
    )
    config.addinivalue_line(
        "markers",
        "slow: seconds each — a whole build, a Python or Pyodide process, or SmolLM2 loaded (added to every test that"
        " uses the model); in make test, not in test-fast",
    )
    config._shared_builds = SharedBuilds(config)  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    builds = getattr(config, "_shared_builds", None)
    if builds is not None:
        builds.close()


# The course's fixtures that load or read the 93 MB model (tests/course/conftest.py): seconds per test process.
MODEL_FIXTURES = {"smollm2", "smollm2_metadata"}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: `-m "not shared_build"` sees the mark
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test that reads a shared build is marked `shared_build`; every test that loads SmolLM2, `slow`."""
    for item in items:
        uses = set(getattr(item, "fixturenames", ()))
        if uses & set(SHARED_BUILDS):
            item.add_marker(pytest.mark.shared_build)
        if uses & MODEL_FIXTURES:
            item.add_marker(pytest.mark.slow)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Each build a selected test needs is started now, in the background, while the tests before it run."""
    if session.config.option.collectonly:
        return
    needed = {name for item in session.items for name in set(getattr(item, "fixturenames", ())) & set(SHARED_BUILDS)}
    for name in sorted(needed):
        content, python_runtime = SHARED_BUILDS[name]
        session.config._shared_builds.start(name, content, python_runtime=python_runtime)  # type: ignore[attr-defined]


def shared_site(request: pytest.FixtureRequest, name: str) -> Path:
    builds = request.config._shared_builds  # type: ignore[attr-defined]
    content, python_runtime = SHARED_BUILDS[name]
    builds.start(name, content, python_runtime=python_runtime)  # a no-op once started
    return builds.wait(name)


@pytest.fixture(scope="session")
def course_site(request) -> Path:
    """The real course (content/), built with the Python runtime once per test run for every worker: the course's
    build tests and every browser test read it. Read-only."""
    return shared_site(request, "course_site")


@pytest.fixture(scope="session")
def minimal_site(request) -> Path:
    """examples/minimal built by the engine alone, with the Python runtime, once per test run. Read-only."""
    return shared_site(request, "minimal_site")


@pytest.fixture(scope="session")
def minimal_widget_site(request) -> Path:
    """examples/minimal's widget fixtures, one page per widget folder (tests/widget_fixtures.py). Read-only."""
    return shared_site(request, "minimal_widget_site")


@pytest.fixture(scope="session")
def course_widget_site(request) -> Path:
    """The attention course's widget fixtures, one page per widget folder (tests/widget_fixtures.py). Read-only."""
    return shared_site(request, "course_widget_site")


@pytest.fixture(scope="session")
def built_site(course_site) -> Path:
    """The name the browser tests knew the shared course build by."""
    return course_site


def all_widgets(content_dir: Path = CONTENT) -> dict:
    """Every widget kind of the course `content_dir`'s site.yml names (builder/course.py `load_course`): name →
    `Widget`. The tests know the widget kinds only from here, never from a list of their own."""
    from builder.course import load_course

    return load_course(content_dir, ROOT).widgets
