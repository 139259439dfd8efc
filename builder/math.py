"""Math stage: typeset every formula of the site with KaTeX 0.16.22, once.

Formulas are de-duplicated across pages and cached on disk by content hash (formula + display mode +
KaTeX version), so a rebuild only typesets formulas it has never seen.
"""
from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pykatex

KATEX_VERSION = "0.16.22"


@dataclass(frozen=True)
class MathError:
    tex: str
    display: bool
    message: str


def render_formula(tex: str, display: bool) -> str:
    """Typeset one formula; raises pykatex.ParseError on bad TeX."""
    # strict="ignore": KaTeX's strict-mode warnings (e.g. CJK in math) would be printed to raw stdout.
    return pykatex.renderToString(tex, displayMode=display, throwOnError=True, strict="ignore", output="htmlAndMathml")


class MathCache:
    """A small persistent key → HTML store (sqlite, safe across processes)."""

    def __init__(self, path: Path | None):
        self.db = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, timeout=30)
            self.db.execute("CREATE TABLE IF NOT EXISTS formula (key TEXT PRIMARY KEY, html TEXT NOT NULL)")

    @staticmethod
    def key(tex: str, display: bool) -> str:
        return hashlib.sha256(f"{KATEX_VERSION}\0{int(display)}\0{tex}".encode()).hexdigest()

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
        if self.db is not None:
            self.db.close()


def render_all(formulas: set[tuple[str, bool]], cache: MathCache) -> tuple[dict[tuple[str, bool], str], dict[tuple[str, bool], str], int]:
    """Typeset all formulas. Returns (html by formula, error message by formula, number freshly rendered)."""
    ordered = sorted(formulas)
    keys = {f: MathCache.key(*f) for f in ordered}
    cached = cache.get_many(list(keys.values()))
    html: dict[tuple[str, bool], str] = {}
    errors: dict[tuple[str, bool], str] = {}
    fresh: dict[str, str] = {}
    for f in ordered:
        k = keys[f]
        if k in cached:
            html[f] = cached[k]
            continue
        try:
            out = render_formula(*f)
        except pykatex.ParseError as exc:
            errors[f] = str(exc)
            continue
        html[f] = out
        fresh[k] = out
    cache.put_many(fresh)
    return html, errors, len(fresh)
