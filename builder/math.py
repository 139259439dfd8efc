"""Math stage: typeset every formula of the site with KaTeX 0.16.22, once.

Formulas are de-duplicated across pages and cached on disk by content hash (formula + display mode +
KaTeX version), so a rebuild only typesets formulas it has never seen.

Two engines run the very same KaTeX build and must produce byte-identical HTML (tests/unit/test_math_engines.py):

* `V8Engine` — `node_modules/katex/dist/katex.min.js` inside V8 (the `mini-racer` package), about 3–5× faster
  than QuickJS; formulas are sent in batches to amortise the Python ↔ V8 call;
* `PykatexEngine` — pykatex (KaTeX embedded in QuickJS): the reference, and the fallback when mini-racer or
  node_modules/katex is missing.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Protocol

import pykatex

KATEX_VERSION = "0.16.22"
ROOT = Path(__file__).resolve().parent.parent
KATEX_JS = ROOT / "node_modules" / "katex" / "dist" / "katex.min.js"
# The options every engine passes to KaTeX. strict="ignore": KaTeX's strict-mode warnings (e.g. CJK in math)
# would be printed to raw stdout.
KATEX_OPTIONS = {"throwOnError": True, "strict": "ignore", "output": "htmlAndMathml"}
PARSE_ERROR_PREFIX = "KaTeX parse error: "

Formula = tuple[str, bool]  # (TeX, display mode)


@dataclass(frozen=True)
class MathError:
    tex: str
    display: bool
    message: str


class MathEngine(Protocol):
    name: str

    def render_many(self, formulas: list[Formula]) -> list[tuple[str | None, str | None]]:
        """(html, None) or (None, KaTeX's error message) for each formula, in order."""


class PykatexEngine:
    """KaTeX in QuickJS (pykatex): the reference engine."""

    name = "pykatex"

    def render_many(self, formulas: list[Formula]) -> list[tuple[str | None, str | None]]:
        out: list[tuple[str | None, str | None]] = []
        for tex, display in formulas:
            try:
                out.append((render_formula(tex, display), None))
            except pykatex.ParseError as exc:
                out.append((None, str(exc)))
        return out


_V8_GLUE = """
function __courseRenderBatch(json) {
  const options = %s;
  return JSON.stringify(JSON.parse(json).map(([tex, display]) => {
    try {
      return [katex.renderToString(tex, Object.assign({displayMode: display}, options)), null];
    } catch (e) {
      if (e instanceof katex.ParseError) return [null, String(e.message)];
      throw e;
    }
  }));
}
""" % json.dumps(KATEX_OPTIONS)


class V8Engine:
    """KaTeX (node_modules/katex, the same 0.16.22 build) in V8 via mini-racer."""

    name = "v8"
    BATCH = 400

    def __init__(self, katex_js: Path = KATEX_JS):
        from py_mini_racer import MiniRacer  # imported lazily: optional, and V8 must not start before a fork

        source = katex_js.read_text(encoding="utf-8")
        if f'version:"{KATEX_VERSION}"' not in source.replace(" ", ""):
            raise RuntimeError(f"{katex_js} is not KaTeX {KATEX_VERSION}")
        self.ctx = MiniRacer()
        self.ctx.eval(source)
        self.ctx.eval(_V8_GLUE)

    def render_many(self, formulas: list[Formula]) -> list[tuple[str | None, str | None]]:
        out: list[tuple[str | None, str | None]] = []
        for i in range(0, len(formulas), self.BATCH):
            batch = [[tex, display] for tex, display in formulas[i : i + self.BATCH]]
            for html, error in json.loads(self.ctx.call("__courseRenderBatch", json.dumps(batch))):
                # pykatex reports a ParseError without KaTeX's "KaTeX parse error: " prefix; match it.
                out.append((html, error.removeprefix(PARSE_ERROR_PREFIX) if error is not None else None))
        return out


_engine: MathEngine | None = None
_memo: dict[str, str] = {}  # formula key → HTML, for this process


def default_engine() -> MathEngine:
    """The fastest available engine, created once per process (V8 start-up + KaTeX load ≈ 50 ms)."""
    global _engine
    if _engine is None:
        try:
            _engine = V8Engine()
        except (ImportError, OSError, RuntimeError):
            _engine = PykatexEngine()
    return _engine


def render_formula(tex: str, display: bool) -> str:
    """Typeset one formula with the reference engine; raises pykatex.ParseError on bad TeX."""
    return pykatex.renderToString(tex, displayMode=display, **KATEX_OPTIONS)


class MathCache:
    """A small persistent key → HTML store (sqlite, safe across processes; one connection per process, kept
    open, write-ahead log without an fsync per commit: see builder/cache.py)."""

    def __init__(self, path: Path | None):
        from .cache import connection

        self.db: sqlite3.Connection | None = None
        if path is not None:
            self.db = connection(path, "CREATE TABLE IF NOT EXISTS formula (key TEXT PRIMARY KEY, html TEXT NOT NULL)")

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
        self.db = None  # the connection stays open for this process's next build


def render_all(formulas: Iterable[Formula], cache: MathCache, engine: MathEngine | None = None,
               memo: dict[str, str] | None = None) -> tuple[dict[Formula, str], dict[Formula, str], int]:
    """Typeset all formulas. Returns (html by formula, error message by formula, number freshly rendered).

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
        for f, (out, error) in zip(todo, (engine or default_engine()).render_many(todo)):
            if error is not None:
                errors[f] = error
            else:
                html[f] = fresh[keys[f]] = out  # type: ignore[assignment]
    cache.put_many(fresh)
    for f, out in html.items():
        memo[keys[f]] = out
    return html, errors, len(fresh)
