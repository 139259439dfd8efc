"""Math stage: typeset every formula of the site with KaTeX 0.16.22, once.

Formulas are de-duplicated across pages and cached on disk by content hash (formula + display mode +
KaTeX version), so a rebuild only typesets formulas it has never seen.

Two engines run the very same KaTeX build and must produce byte-identical HTML (tests/unit/test_math_engines.py):

* `V8Engine` — `node_modules/katex/dist/katex.min.js` inside V8 (the `mini-racer` package), about 3–5× faster
  than QuickJS; formulas are sent in batches to amortise the Python ↔ V8 call;
* `PykatexEngine` — pykatex (KaTeX embedded in QuickJS): the reference, and the fallback when mini-racer or
  node_modules/katex is missing.

What is cached and put into pages is KaTeX's output made smaller by `compact_katex_html` (the same elements,
classes and lengths; see there), and the site ships only the rules of KaTeX's stylesheet that its formulas
can match (`prune_katex_css`).
"""
from __future__ import annotations

import hashlib
import json
import re
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
# Part of the formula cache key: change it whenever compact_katex_html() changes what it returns.
COMPACT_VERSION = "compact-1"

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
        return hashlib.sha256(f"{KATEX_VERSION}\0{COMPACT_VERSION}\0{int(display)}\0{tex}".encode()).hexdigest()

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
                html[f] = fresh[keys[f]] = compact_katex_html(out)  # type: ignore[arg-type]
    cache.put_many(fresh)
    for f, out in html.items():
        memo[keys[f]] = out
    return html, errors, len(fresh)


# ------------------------------------------------------------------------------------ smaller output

_MATH_XMLNS = '<math xmlns="http://www.w3.org/1998/Math/MathML"'
_SVG_XMLNS = '<svg xmlns="http://www.w3.org/2000/svg"'
_TEX_ANNOTATION_RE = re.compile(
    r'<semantics>(.*?)<annotation encoding="application/x-tex">[^<]*</annotation></semantics>', re.S)
_STYLE_RE = re.compile(r' style="([^"]*)"')
_LEADING_ZERO_RE = re.compile(r"(?<![\w.])0\.(?=\d)")


def _compact_style(match: re.Match[str]) -> str:
    value = _LEADING_ZERO_RE.sub(".", match.group(1))
    return f' style="{value[:-1] if value.endswith(";") else value}"'


def compact_katex_html(html: str) -> str:
    """KaTeX's HTML+MathML with bytes no browser or screen reader uses taken out (≈ 15 % of a formula):

    * `xmlns` on `<math>` and `<svg>`: in an HTML document the parser puts both in their namespace anyway;
    * the TeX source (`<annotation encoding="application/x-tex">`, and the `<semantics>` around it): MathML
      renders and exposes only the first child of `<semantics>`; nothing on the site reads the TeX (the
      search index skips it);
    * in `style` attributes, a leading zero (`0.25em` → `.25em`, `-0.25em` → `-.25em`) and the final `;`.

    Everything else (elements, classes, attributes, lengths) is KaTeX's byte for byte."""
    html = html.replace(_MATH_XMLNS, "<math").replace(_SVG_XMLNS, "<svg")
    html = _TEX_ANNOTATION_RE.sub(r"\1", html)
    return _STYLE_RE.sub(_compact_style, html)


# KaTeX's stylesheet has a rule for every size pair, font and construct KaTeX knows (21 KB); a course uses a
# small part of it. A selector that requires a class no formula of the site has can match nothing: it goes,
# and so does a rule left without selectors, and an @font-face whose family no remaining rule names.

_CLASS_ATTR_RE = re.compile(r'\sclass="([^"]*)"')
_CLASS_SELECTOR_RE = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")
_FUNCTIONAL_PSEUDO_RE = re.compile(r":[\w-]+\((?:[^()]|\([^()]*\))*\)")  # :not(.x) requires no class
_ATTRIBUTE_SELECTOR_RE = re.compile(r"\[[^\]]*\]")


def classes_in(html: str) -> set[str]:
    """Every class name used in `html`'s class attributes."""
    return set(" ".join(_CLASS_ATTR_RE.findall(html)).split())


def css_blocks(css: str) -> list[tuple[str, str]]:
    """Top-level (prelude, body) pairs of a stylesheet; body is None-free: '' for `@import …;`-like statements.
    Strings and comments are skipped over, so braces inside them do not count."""
    blocks: list[tuple[str, str]] = []
    i, n, start = 0, len(css), 0
    depth, open_at = 0, -1
    while i < n:
        c = css[i]
        if c in "\"'":
            j = i + 1
            while j < n and css[j] != c:
                j += 2 if css[j] == "\\" else 1
            i = j + 1
            continue
        if css.startswith("/*", i):
            end = css.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if c == "{":
            if depth == 0:
                open_at = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                blocks.append((css[start:open_at], css[open_at + 1 : i]))
                start = i + 1
            elif depth < 0:
                raise ValueError("unbalanced '}' in stylesheet")
        elif c == ";" and depth == 0:
            blocks.append((css[start : i + 1], ""))
            start = i + 1
        i += 1
    if depth != 0:
        raise ValueError("unbalanced '{' in stylesheet")
    if css[start:].strip():
        blocks.append((css[start:], ""))
    return blocks


def _split_selectors(prelude: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(prelude):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(prelude[start:i])
            start = i + 1
    parts.append(prelude[start:])
    return parts


def _selector_can_match(selector: str, used: set[str]) -> bool:
    if "\\" in selector:  # escaped characters: not worth reasoning about, keep the selector
        return True
    bare = _ATTRIBUTE_SELECTOR_RE.sub("", _FUNCTIONAL_PSEUDO_RE.sub("", selector))
    return all(name in used for name in _CLASS_SELECTOR_RE.findall(bare))


def _prune_rules(css: str, used: set[str]) -> list[tuple[str, str | None]]:
    """The rules of a stylesheet in order, as (text, font family): selectors pruned to those that can match,
    rules left with none dropped; the family is set for top-level @font-face rules (decided later)."""
    kept: list[tuple[str, str | None]] = []
    for prelude, body in css_blocks(css):
        head = prelude.strip().lower()
        if head.startswith("@font-face"):
            family = re.search(r"font-family\s*:\s*([^;]+)", body)
            kept.append((f"{prelude}{{{body}}}", family.group(1).strip().strip("\"'") if family else ""))
        elif head.startswith(("@media", "@supports", "@layer", "@container")) and "{" in body:
            inner = "".join(text for text, _ in _prune_rules(body, used))
            if inner:
                kept.append((f"{prelude}{{{inner}}}", None))
        elif head.startswith("@"):  # @charset, @import, @keyframes, …: kept as they are
            kept.append((f"{prelude}{{{body}}}" if body or not head.endswith(";") else prelude, None))
        else:
            selectors = [s for s in _split_selectors(prelude) if _selector_can_match(s, used)]
            if selectors:
                kept.append((f"{','.join(selectors)}{{{body}}}", None))
    return kept


def prune_katex_css(css: str, used_classes: set[str]) -> str:
    """KaTeX's stylesheet without what cannot apply to formulas whose HTML uses only `used_classes`:
    selectors requiring another class (a rule keeps its other selectors), rules left with none, and
    @font-face rules of families that no kept rule names. Order and text of everything kept are unchanged."""
    rules = _prune_rules(css, used_classes)
    named = "".join(text for text, family in rules if family is None)
    return "".join(text for text, family in rules
                   if family is None or not family
                   or re.search(rf"(?<![\w-]){re.escape(family)}(?![\w-])", named))


KATEX_CSS_PATH = "assets/katex/katex.min.css"


_formula_facts: dict[str, tuple[frozenset[str], frozenset[str]]] = {}  # formula HTML → (classes, characters)
_TAG_RE = re.compile(r"<[^>]*>")
_CSS_CONTENT_RE = re.compile(r"content\s*:\s*\"([^\"]*)\"")


def formula_characters(formula_html: str) -> set[str]:
    """Every character of a formula's text (visual part and MathML)."""
    from html import unescape

    return set(unescape(_TAG_RE.sub("", formula_html)) if "&" in formula_html else _TAG_RE.sub("", formula_html))


def site_katex_assets(katex_files: dict[str, bytes], formulas: Iterable[Formula],
                      cache_dir: Path | None) -> dict[str, bytes]:
    """KaTeX's stylesheet and fonts as this site needs them: the stylesheet pruned to the classes of the site's
    formulas (prune_katex_css), each font subset to their characters (subset_font). The formulas are typeset
    already: their HTML comes from the cache."""
    cache = MathCache(cache_dir / "katex.sqlite" if cache_dir else None)
    try:
        html, _, _ = render_all(formulas, cache)
    finally:
        cache.close()
    used: set[str] = set()
    characters: set[str] = set()
    for formula_html in html.values():
        facts = _formula_facts.get(formula_html)
        if facts is None:
            if len(_formula_facts) > 50_000:
                _formula_facts.clear()
            facts = _formula_facts[formula_html] = (frozenset(classes_in(formula_html)),
                                                    frozenset(formula_characters(formula_html)))
        used |= facts[0]
        characters |= facts[1]
    from .fonts import KATEX_FONTS_DIR, autohinter_reference, subset_fonts_cached  # fonts.py imports this module

    out = dict(katex_files)
    if KATEX_CSS_PATH in katex_files:
        css = prune_katex_css(katex_files[KATEX_CSS_PATH].decode("utf-8"), used)
        out[KATEX_CSS_PATH] = css.encode("utf-8")
        for text in _CSS_CONTENT_RE.findall(css):  # generated content is drawn with the fonts too
            characters |= set(text)
    named = set(re.findall(r"url\(\s*[\"']?fonts/([^\"')?#]+)", out.get(KATEX_CSS_PATH, b"").decode("utf-8")))
    fonts = {name: data for name, data in katex_files.items()
             if name.startswith(KATEX_FONTS_DIR) and name[len(KATEX_FONTS_DIR):] in named}
    characters |= autohinter_reference(characters)
    subsets = subset_fonts_cached(fonts, "".join(sorted(characters)), katex_files.get(KATEX_CSS_PATH, b"").decode(),
                                   html.values(), cache_dir)
    out.update(subsets or {})
    return out


def site_katex_assets_cached(katex_files: dict[str, bytes], formulas: Iterable[Formula],
                             cache_dir: Path | None) -> dict[str, bytes]:
    """site_katex_assets(), cached by what it depends on: the set of the site's formulas (most edits change no
    formula), KaTeX's files and the code of this module and of builder/fonts.py (the subsetting)."""
    from . import cache as cachestore

    ordered = sorted(set(formulas))
    key = cachestore.digest("site-katex-assets", cachestore.file_digest(Path(__file__)),
                            cachestore.file_digest(Path(__file__).with_name("fonts.py")),
                            json.dumps(ordered, ensure_ascii=False),
                            *(name.encode() + b"\0" + hashlib.sha256(data).digest()
                              for name, data in sorted(katex_files.items())))
    with cachestore.open_cache(cache_dir) as store:
        found = store.get(key)
        if found is None:
            found = site_katex_assets(katex_files, ordered, cache_dir)
            store.put(key, found)
    return found
