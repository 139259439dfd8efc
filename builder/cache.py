"""Persistent, content-addressed build caches (pages, whole-stage outputs) and input fingerprints.

Everything is keyed by a sha256 of *all* the inputs of the thing cached, so there is nothing to invalidate:
a changed input is simply a different key, and the code that makes a thing is one of its inputs (`code_digest`: the
bytes of its source files, never a version number bumped by hand). Entries live in `<cache_dir>/build.sqlite` (safe
across processes) and, for a long-lived process such as the authoring server, also in memory.
Values are pickles written and read only by this build (never data from elsewhere).

What does not depend on a build's cache folder lives in one machine-wide folder (`machine_cache()`, like pip's and
npm's own caches): `downloads/` (pinned files, named by their sha256: builder/downloads.py) and `derived/` (what is
computed from them and from code: the Python runtime's prepared files, a course's model runs and trained results,
each named or keyed by digests of its inputs), so a second checkout, a test run or a `--no-cache` build reuses them.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

MACHINE_CACHE_ENV = "COURSE_MACHINE_CACHE"
_memory: dict[str, Any] = {}  # key → value, for this process (the server reuses it between rebuilds)
_MEMORY_LIMIT = 20_000


def digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def machine_cache() -> Path:
    """The machine-wide cache folder: `$COURSE_MACHINE_CACHE`, else `$XDG_CACHE_HOME/attention-course`, else
    `~/.cache/attention-course`. Where it is never changes a site's bytes: everything in it is checked by its sha256
    or named by its inputs."""
    env = os.environ.get(MACHINE_CACHE_ENV)
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attention-course"


def derived_dir(name: str) -> Path:
    """`<machine cache>/derived/<name>`: one folder per kind of derived data (not created here)."""
    return machine_cache() / "derived" / name


def code_digest(*paths: Path | str) -> str:
    """A digest of the source files (or folders) that make a cached thing: part of its key instead of a version
    constant changed by hand, so any change to that code is a new key and nothing is invalidated by hand."""
    return tree_digest(Path(p) for p in paths)[:16]


def tree_digest(paths: Iterable[Path], *, skip: Callable[[Path], bool] = lambda p: False) -> str:
    """Hash of every file (relative name + bytes) under the given files/folders, in a stable order."""
    h = hashlib.sha256()
    for base in paths:
        if base.is_file():
            files = [base]
        elif base.is_dir():
            # skipped names are dropped before the stat of is_file() (e.g. 2,000 pages when hashing content/)
            files = sorted(p for p in base.rglob("*") if "__pycache__" not in p.parts and not skip(p) and p.is_file())
        else:
            h.update(f"missing:{base}\0".encode())
            continue
        for path in files:
            if skip(path):
                continue
            h.update(f"{path.relative_to(base.parent) if base.is_dir() else path.name}\0".encode())
            h.update(file_digest(path))
    return h.hexdigest()


_file_digests: dict[str, tuple[tuple[int, int, int, int], bytes]] = {}  # path → (stat signature, sha256)
_SETTLED_NS = 2_000_000_000


def file_digest(path: Path) -> bytes:
    """sha256 of a file's bytes, remembered by this process while the file's stat signature is unchanged.

    Any write changes a file's ctime (which no tool can set back), so an unchanged (mtime, ctime, size, inode)
    means unchanged bytes — except for a file written within the file system's timestamp granularity of
    being hashed: only files whose last change is a couple of seconds old are remembered.
    """
    st = os.stat(path)
    signature = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
    key = str(path)
    known = _file_digests.get(key)
    if known is not None and known[0] == signature:
        return known[1]
    data = hashlib.sha256(path.read_bytes()).digest()
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > _SETTLED_NS:
        _file_digests[key] = (signature, data)
    return data


class BuildCache:
    """key → picklable value, in sqlite (when `path` is given) plus this process's memory."""

    def __init__(self, path: Path | None):
        self.db: sqlite3.Connection | None = connection(path) if path is not None else None

    def get_many(self, keys: list[str]) -> dict[str, Any]:
        found = {k: _memory[k] for k in keys if k in _memory}
        missing = [k for k in keys if k not in found]
        if self.db is not None and missing:
            for i in range(0, len(missing), 500):
                chunk = missing[i : i + 500]
                rows = self.db.execute(
                    f"SELECT key, value FROM entry WHERE key IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall()
                for key, blob in rows:
                    try:
                        found[key] = _remember(key, pickle.loads(blob))
                    except Exception:  # an entry from an incompatible build: treat as a miss
                        continue
        return found

    def get(self, key: str) -> Any | None:
        return self.get_many([key]).get(key)

    def put_many(self, items: dict[str, Any]) -> None:
        for key, value in items.items():
            _remember(key, value)
        if self.db is not None and items:
            with self.db:
                self.db.executemany(
                    "INSERT OR REPLACE INTO entry VALUES (?, ?)",
                    [(k, pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL)) for k, v in items.items()],
                )

    def put(self, key: str, value: Any) -> None:
        self.put_many({key: value})

    def close(self) -> None:
        self.db = None  # the connection stays open for the process's next build (see connection())

    def __enter__(self) -> BuildCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_connections: dict[str, sqlite3.Connection] = {}
_connections_lock = threading.Lock()


def _set_wal(db: sqlite3.Connection, attempts: int = 300) -> None:
    """Switch a connection to the write-ahead log. On a new file the switch needs the file to itself, and SQLite
    does not wait for it (the busy timeout does not cover it): two processes opening the same new cache at once
    (test workers) got "database is locked" from one of them. Try again for up to ~30 s."""
    for attempt in range(attempts):
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or attempt == attempts - 1:
                raise
            time.sleep(0.1)


def connection(
    path: Path, create_sql: str = "CREATE TABLE IF NOT EXISTS entry (key TEXT PRIMARY KEY, value BLOB NOT NULL)"
) -> sqlite3.Connection:
    """One connection per cache file per process, kept open: closing the last connection checkpoints the
    write-ahead log with an fsync (~50 ms), which a rebuild in the authoring server would pay every time.
    Builds in one process never overlap (the server builds one at a time), so the connection may be used
    from whichever thread runs the build."""
    key = str(path.resolve())
    with _connections_lock:
        db = _connections.get(key)
        if db is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=30, check_same_thread=False)
            # A cache, not a record: write-ahead log without an fsync per commit (NORMAL keeps the file
            # consistent after a crash; at worst the last entries are lost and recomputed).
            _set_wal(db)
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(create_sql)
            _connections[key] = db
        return db


def _remember(key: str, value: Any) -> Any:
    if len(_memory) >= _MEMORY_LIMIT:
        _memory.clear()
    _memory[key] = value
    return value


def open_cache(cache_dir: Path | None) -> BuildCache:
    return BuildCache(cache_dir / "build.sqlite" if cache_dir is not None else None)


T = TypeVar("T")


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on `path` (no-op where fcntl is missing), so only one process at a time does what
    it guards."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cached(
    store: BuildCache,
    key: str,
    compute: Callable[[], T],
    *,
    keep: Callable[[T], bool] = lambda value: True,
    lock: Path | None = None,
) -> T:
    """The value stored under `key`, else `compute()` — stored unless `keep(value)` says not to (e.g. a result
    produced together with new problems). The one "look it up, else compute and store" of the build: every
    stage that caches does it through here, keyed by a digest() of all its inputs. With `lock` (a file), processes
    that miss together compute once: the others wait on the lock, then find the value stored."""
    value = store.get(key)
    if value is None and lock is not None:
        with file_lock(lock):
            return cached(store, key, compute, keep=keep)
    if value is None:
        value = compute()
        if keep(value):
            store.put(key, value)
    return value
