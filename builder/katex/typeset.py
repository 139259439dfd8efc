"""Typesetting every formula of the site, once (`render_all`).

Formulas are de-duplicated across pages and cached on disk by content hash (formula + display mode + KaTeX
version and options + the code that calls KaTeX and compacts its output, `CODE`), so a rebuild only typesets formulas
it has never seen. What is cached is KaTeX's
output made smaller by compact_katex_html (compact.py).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from builder import progress
from builder.cache import code_digest, connection

from . import compact, engines
from .compact import compact_katex_html
from .engines import KATEX_OPTIONS, KATEX_VERSION, Formula, MathEngine, default_engine, untrusted_command

OPTIONS_KEY = f"{KATEX_VERSION} {json.dumps(KATEX_OPTIONS, sort_keys=True)}"
"""What besides the TeX and the code decides a formula's HTML: the KaTeX version and its options (part of every
cache key)."""
CODE = [Path(compact.__file__), Path(engines.__file__)]
"""The code whose output is cached: how KaTeX is called and how its HTML is compacted (its digest is in every key)."""


@lru_cache(maxsize=1)
def _code_key() -> str:
    return code_digest(*CODE)


__all__ = ["Formula", "MathCache", "MathError", "render_all"]


@dataclass(frozen=True)
class MathError:
    tex: str
    display: bool
    message: str


_memo: dict[str, str] = {}  # formula key → HTML, for this process


class MathCache:
    """A small persistent key → HTML store (sqlite, safe across processes; one connection per process, kept
    open, write-ahead log without an fsync per commit: see builder/cache.py)."""

    def __init__(self, path: Path | None):
        self.db: sqlite3.Connection | None = None
        if path is not None:
            self.db = connection(path, "CREATE TABLE IF NOT EXISTS formula (key TEXT PRIMARY KEY, html TEXT NOT NULL)")

    @staticmethod
    def key(tex: str, display: bool) -> str:
        return hashlib.sha256(f"{OPTIONS_KEY}\0{_code_key()}\0{int(display)}\0{tex}".encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, str]:
        if self.db is None or not keys:
            return {}
        found: dict[str, str] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            q = f"SELECT key, html FROM formula WHERE key IN ({','.join('?' * len(chunk))})"
            found.update(self.db.execute(q, chunk).fetchall())
        return found

    def put_many(self, items: dict[str, str]) -> None:
        if self.db is None or not items:
            return
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO formula VALUES (?, ?)", items.items())

    def close(self) -> None:
        self.db = None  # the connection stays open for this process's next build


def render_all(
    formulas: Iterable[Formula],
    cache: MathCache,
    root: Path,
    engine: MathEngine | None = None,
    memo: dict[str, str] | None = None,
) -> tuple[dict[Formula, str], dict[Formula, str], int]:
    """Typeset all formulas. Returns (html by formula, error message by formula, number freshly rendered).

    `engine`: default_engine(root) unless given — started only when a formula is in neither memo nor cache.
    `memo` (key → html) is an in-memory layer in front of the sqlite cache; by default this process's own, so
    a worker or the authoring server typesets a formula at most once.
    """
    ordered = sorted(set(formulas))
    keys = {f: MathCache.key(*f) for f in ordered}
    memo = memo if memo is not None else _memo
    cached = cache.get_many([k for k in keys.values() if k not in memo])
    html: dict[Formula, str] = {}
    errors: dict[Formula, str] = {}
    todo: list[Formula] = []
    for f in ordered:
        hit = memo.get(keys[f]) or cached.get(keys[f])
        if hit is not None:
            html[f] = hit
        else:
            todo.append(f)
    fresh: dict[str, str] = {}
    if todo:
        with progress.step("typesetting formulas with KaTeX", total=len(todo), unit="formulas") as step:
            rendered = (engine or default_engine(root)).render_many(todo)
            step.update(len(todo))
        for f, (out, error) in zip(todo, rendered):
            error = error if error is not None else untrusted_command(out or "")
            if error is not None:
                errors[f] = error
            else:
                html[f] = fresh[keys[f]] = compact_katex_html(out)  # type: ignore[arg-type]
    cache.put_many(fresh)
    for f, out in html.items():
        memo[keys[f]] = out
    return html, errors, len(fresh)
