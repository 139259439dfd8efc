"""The KaTeX engines: KaTeX 0.16.22 turning one formula's TeX into HTML+MathML.

Two engines run the very same KaTeX build and must produce byte-identical HTML (tests/engine/test_math_engines.py):

* `V8Engine` — `node_modules/katex/dist/katex.min.js` inside V8 (the `mini-racer` package), about 3–5× faster
  than QuickJS; formulas are sent in batches to amortise the Python ↔ V8 call;
* `PykatexEngine` — pykatex (KaTeX embedded in QuickJS): the reference, and the fallback when
  node_modules/katex is missing (`npm ci` not run) or is another KaTeX version.
"""

from __future__ import annotations

import atexit
import json
import re
from pathlib import Path
from typing import Protocol

import pykatex

KATEX_VERSION = "0.16.22"
KATEX_DIST = Path("node_modules/katex/dist")  # relative to the repository root
KATEX_JS = KATEX_DIST / "katex.min.js"
# The options every engine passes to KaTeX. strict="ignore": KaTeX's strict-mode warnings (e.g. CJK in math)
# would be printed to raw stdout.
# errorColor: KaTeX draws a command that needs `trust` (\\href, \\url, \\includegraphics, \\htmlClass, …; trust
# stays off) as its name in errorColor instead of throwing; this one colour, used for nothing else, lets
# `untrusted_command` find it and make it a build error.
UNTRUSTED_COLOR = "#cc0001"
# maxSize: every size the author writes (\\rule, \\hspace, \\kern, \\raisebox, …) is capped at MAX_SIZE_EM, so one
# formula cannot cover the page; a formula that reaches the cap is a build error (`oversized`, below). maxExpand is
# KaTeX's default (1000 macro expansions: an expansion bomb is a parse error), not passed: pykatex then ignores the
# other options.
MAX_SIZE_EM = 30
KATEX_OPTIONS = {
    "throwOnError": True,
    "strict": "ignore",
    "output": "htmlAndMathml",
    "errorColor": UNTRUSTED_COLOR,
    "maxSize": MAX_SIZE_EM,
}
OVERSIZED = (
    f"a size in the formula is larger than {MAX_SIZE_EM}em (\\rule, \\hspace, \\kern, \\raisebox, …): one formula "
    "would cover the page; make it smaller"
)
UNTRUSTED_RE = re.compile(r"color:" + UNTRUSTED_COLOR + r';?">(\\[A-Za-z@]+)</span>')
PARSE_ERROR_PREFIX = "KaTeX parse error: "

Formula = tuple[str, bool]  # (TeX, display mode)


def untrusted_command(html: str) -> str | None:
    """The error for a formula that uses a command KaTeX only runs when trusted, or None."""
    m = UNTRUSTED_RE.search(html)
    if m is None:
        return None
    return (
        f"{m.group(1)} is not allowed in math (KaTeX's trust is off: formulas cannot link, load images or set "
        "HTML classes, ids, styles or data)"
    )


class MathEngine(Protocol):
    name: str

    def render_many(self, formulas: list[Formula]) -> list[tuple[str | None, str | None]]:
        """(html, None) or (None, KaTeX's error message) for each formula, in order."""


def render_formula(tex: str, display: bool) -> str:
    """Typeset one formula with the reference engine; raises pykatex.ParseError on bad TeX."""
    return pykatex.renderToString(tex, displayMode=display, **KATEX_OPTIONS)


def oversized(tex: str, display: bool, html: str) -> bool:
    """Did KaTeX cap a size of this formula? (It caps silently: the formula is typeset again with a cap one em
    higher, and any difference is a size that reached it.)"""
    return pykatex.renderToString(tex, displayMode=display, **{**KATEX_OPTIONS, "maxSize": MAX_SIZE_EM + 1}) != html


class PykatexEngine:
    """KaTeX in QuickJS (pykatex): the reference engine."""

    name = "pykatex"

    def render_many(self, formulas: list[Formula]) -> list[tuple[str | None, str | None]]:
        out: list[tuple[str | None, str | None]] = []
        for tex, display in formulas:
            try:
                html = render_formula(tex, display)
                out.append((None, OVERSIZED) if oversized(tex, display, html) else (html, None))
            except pykatex.ParseError as exc:
                out.append((None, str(exc)))
            except RecursionError:
                out.append((None, "the formula is nested too deeply for KaTeX"))
        return out


# %-formatting, not str.format or an f-string: those would need every brace of the JS doubled.
_V8_GLUE = """
function __courseRenderBatch(json) {
  const options = %s;
  return JSON.stringify(JSON.parse(json).map(([tex, display]) => {
    try {
      const html = katex.renderToString(tex, Object.assign({displayMode: display}, options));
      const higher = Object.assign({displayMode: display}, options, {maxSize: options.maxSize + 1});
      return html === katex.renderToString(tex, higher) ? [html, null] : [null, %s];
    } catch (e) {
      if (e instanceof katex.ParseError) return [null, String(e.message)];
      if (e instanceof RangeError) return [null, "the formula is nested too deeply for KaTeX"];
      throw e;
    }
  }));
}
""" % (json.dumps(KATEX_OPTIONS), json.dumps(OVERSIZED))  # noqa: UP031 (see above)


class V8Engine:
    """KaTeX (`katex_js`: node_modules/katex's katex.min.js, the same 0.16.22 build) in V8 via mini-racer."""

    name = "v8"
    BATCH = 400

    def __init__(self, katex_js: Path):
        from py_mini_racer import MiniRacer  # imported here: V8 must not start before a fork

        source = katex_js.read_text(encoding="utf-8")
        if f'version:"{KATEX_VERSION}"' not in source.replace(" ", ""):
            raise RuntimeError(f"{katex_js} is not KaTeX {KATEX_VERSION}")
        self.ctx = MiniRacer()
        self.ctx.eval(source)
        self.ctx.eval(_V8_GLUE)
        # Closed before the interpreter shuts down: left to the finaliser, V8's threads could be gone first and the
        # process then hung at exit, its work done (1 run in 8 after a formula error, which keeps V8 busy).
        atexit.register(self.ctx.close)

    def render_many(self, formulas: list[Formula]) -> list[tuple[str | None, str | None]]:
        out: list[tuple[str | None, str | None]] = []
        for i in range(0, len(formulas), self.BATCH):
            batch = [[tex, display] for tex, display in formulas[i : i + self.BATCH]]
            for html, error in json.loads(self.ctx.call("__courseRenderBatch", json.dumps(batch))):
                # pykatex reports a ParseError without KaTeX's "KaTeX parse error: " prefix; match it.
                out.append((html, error.removeprefix(PARSE_ERROR_PREFIX) if error is not None else None))
        return out


_engines: dict[Path, MathEngine] = {}  # katex.min.js → this process's engine


def default_engine(root: Path) -> MathEngine:
    """The fastest available engine for the repository at `root`, created once per process (V8 start-up +
    KaTeX load ≈ 50 ms): V8 running `root`/node_modules/katex, else — that file missing, or not KaTeX
    KATEX_VERSION — pykatex."""
    katex_js = (root / KATEX_JS).resolve()  # one engine per file, however the root is spelt
    engine = _engines.get(katex_js)
    if engine is None:
        try:
            engine = V8Engine(katex_js)
        except (OSError, RuntimeError):
            engine = PykatexEngine()
        _engines[katex_js] = engine
    return engine
