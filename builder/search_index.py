"""Search index, built once per site from the rendered pages and embedded as a classic script.

`assets/search-index.js` sets `Course.search.index` (fetch is blocked on file://, a <script src>
is not). theme/js/site/search.js injects that script the first time the search dialog opens.

Each page is cut into sections at its headings (h2–h4); a section is (page, heading, anchor id, plain text).
Chinese has no spaces between words, so CJK text is indexed by character bigrams (a query of two or more
characters is the intersection of its bigrams' postings) plus single characters (for one-character queries);
Latin text is indexed by lowercase words (a query word matches every indexed word it is a prefix of).
Postings only narrow the candidates: the browser then checks each candidate really contains the query.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from html import escape, unescape
from html.parser import HTMLParser

from .bundle import browser_data_script
from .model import GlossaryTerm, Page, SearchSection

INDEX_FILE = "assets/search-index.js"
INDEX_VERSION = 1

CJK_RUN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
WORD_RE = re.compile(r"[a-z0-9]+")
SPACE_RE = re.compile(r"\s+")

SECTION_TAGS = {"h2", "h3", "h4"}
# Never indexed: scripts (widget data JSON), drawings, KaTeX's visual copy of a formula (its MathML copy is
# kept), the TeX source inside MathML, permalink "#", interactive controls, widgets' number tables and data,
# and code cells' outputs.
SKIP_TAGS = {"script", "style", "template", "svg", "annotation", "button", "noscript", "select", "textarea"}
SKIP_CLASSES = {
    "gloss-tip",
    "heading-anchor",
    "katex-html",
    "cell-output",
    "quiz-actions",
    "quiz-result",
    "widget-body",
}
BLOCK_TAGS = {
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "section",
    "aside",
    "figure",
    "figcaption",
    "table",
    "tr",
    "td",
    "th",
    "pre",
    "blockquote",
    "details",
    "summary",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "br",
    "legend",
    "dd",
    "dt",
}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _SectionSplitter(HTMLParser):
    """Plain text of a rendered page body, cut at headings.

    Driven by `feed_fast()` (a one-regex tokenizer for the well-formed HTML the build produces), or by
    html.parser itself (`feed()`) for markup the tokenizer does not take on (comments, declarations, …)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[dict] = [{"heading": "", "id": "", "parts": []}]
        self.skip_stack: list[str] = []  # tags whose content is being skipped (nested)
        self.heading: dict | None = None  # the section whose heading text is being read

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID_TAGS:
            if tag == "br":
                self._text(" ")
            return
        classes = set((dict(attrs).get("class") or "").split())
        if self.skip_stack or tag in SKIP_TAGS or classes & SKIP_CLASSES:
            self.skip_stack.append(tag)
            return
        if tag in SECTION_TAGS and "quiz-heading" not in classes:  # a quiz's question stays in its section
            ident = dict(attrs).get("id") or ""
            self.heading = {"heading": "", "id": ident, "parts": []}
            self.sections.append(self.heading)
            return
        if tag in BLOCK_TAGS:
            self._text(" ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self._text(" ")

    def handle_endtag(self, tag: str) -> None:
        if self.skip_stack:
            if self.skip_stack[-1] == tag:
                self.skip_stack.pop()
            return
        if tag in SECTION_TAGS and self.heading is not None:  # a quiz heading never opened one
            self.heading = None
            return
        if tag in BLOCK_TAGS:
            self._text(" ")

    def handle_data(self, data: str) -> None:
        if not self.skip_stack:
            self._text(data)

    def _text(self, text: str) -> None:
        if self.heading is not None:
            self.heading["heading"] += text
        else:
            self.sections[-1]["parts"].append(text)

    def feed_fast(self, body_html: str) -> bool:
        """Tokenize `body_html` and call the handlers exactly as html.parser would (same tags, lowercased names,
        unquoted and unescaped attribute values, unescaped text, raw <script>/<style> content), several times
        faster. Returns False when the markup has anything the tokenizer leaves to html.parser (comments,
        declarations, processing instructions, a tag outside its strict grammar); the splitter is then in an
        undefined state: feed a new one with html.parser."""
        pos = 0
        for m in _TOKEN_RE.finditer(body_html):
            if m.start() != pos:
                return False
            pos = m.end()
            kind = m.lastgroup
            if kind == "text":
                text = m.group()
                self.handle_data(unescape(text) if "&" in text else text)
            elif kind == "end":
                self.handle_endtag(m.group("end").lower())
            elif kind == "start":
                raw_attrs = m.group("attrs")
                attrs = _parse_attrs(raw_attrs) if raw_attrs else []
                if m.group("selfclose"):
                    self.handle_startendtag(m.group("tag").lower(), attrs)
                else:
                    self.handle_starttag(m.group("tag").lower(), attrs)
            elif kind == "raw":  # <script>/<style>: content up to the closing tag is raw data
                tag = m.group("rawtag").lower()
                close = m.group("rawclose")
                if close is not None and close[2:-1].strip().lower() != tag:
                    return False  # e.g. <script>…</style>: html.parser would read on
                raw_attrs = m.group("rawattrs")
                self.handle_starttag(tag, _parse_attrs(raw_attrs) if raw_attrs else [])
                if m.group("rawtext"):
                    self.handle_data(m.group("rawtext"))
                if close is not None:
                    self.handle_endtag(tag)
            else:  # a "<" that starts no tag is text
                self.handle_data("<")
        return pos == len(body_html)


# The strict subset of HTML tokens `feed_fast` handles; anything else starting with "<" (a letter, "/", "!" or
# "?" after it) falls back to html.parser. An unquoted attribute value may not touch "/" (html.parser would read
# `<a b=c/>` as b="c/" in a start tag), so such tags fall back too. <script> and <style> are one token, as
# html.parser reads them (CDATA_CONTENT_ELEMENTS): their content is not markup, up to `</script>` (any case).
_RAW_TAGS_SRC = "|".join(map(re.escape, HTMLParser.CDATA_CONTENT_ELEMENTS))  # script|style
_ATTR_SRC = r"""[a-zA-Z_:][-a-zA-Z0-9_:.]*(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`/]+(?=[\s>])))?"""
_TOKEN_RE = re.compile(
    rf"""
    (?P<text>[^<]+)
  | </\s*(?P<end>[a-zA-Z][-.a-zA-Z0-9:_]*)\s*>
  | (?P<raw><(?P<rawtag>(?i:{_RAW_TAGS_SRC}))(?P<rawattrs>(?:\s+{_ATTR_SRC})*)\s*>
       (?P<rawtext>(?s:.*?))(?:(?P<rawclose></\s*(?i:script|style)\s*>)|\Z))
  | <(?P<start>(?P<tag>[a-zA-Z][a-zA-Z0-9-]*)(?P<attrs>(?:\s+{_ATTR_SRC})*)\s*(?P<selfclose>/?)>)
  | (?P<lt><(?![a-zA-Z/!?]))
""",
    re.X,
)
_ATTR_RE = re.compile(r"""([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`/]+))?""")
CDATA_TAGS = frozenset(HTMLParser.CDATA_CONTENT_ELEMENTS)
_NOT_TEXT_ONLY_TAGS = SECTION_TAGS | BLOCK_TAGS | CDATA_TAGS | {"br"}


def _parse_attrs(raw_attrs: str) -> list[tuple[str, str | None]]:
    return [(name.lower(), _attr_value(value)) for name, value in _ATTR_RE.findall(raw_attrs)]


def _attr_value(raw: str) -> str | None:
    if not raw:
        return None  # a name without a value
    if raw[0] in "\"'":
        raw = raw[1:-1]
    return unescape(raw) if raw else raw


def clean(text: str) -> str:
    return SPACE_RE.sub(" ", text.replace("\u200b", "")).strip()


KATEX_HTML_OPEN_RE = re.compile(r'<span class="katex-html"[^>]*>')
SPAN_TAG_RE = re.compile(r"<(/?)span\b")


def drop_katex_html(body_html: str) -> str:
    """`body_html` without KaTeX's visual copies of formulas (never indexed: SKIP_CLASSES), cut out with a
    span-counting scan — most of a math-heavy page's markup, and the slowest part for html.parser."""
    parts = []
    pos = 0
    while (m := KATEX_HTML_OPEN_RE.search(body_html, pos)) is not None:
        depth, end = 1, None
        for tag in SPAN_TAG_RE.finditer(body_html, m.end()):
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                end = body_html.index(">", tag.end()) + 1
                break
        if end is None or "<br" in body_html[m.end() : end]:  # unbalanced, or a <br> the splitter would see
            break
        parts.append(body_html[pos : m.start()])
        pos = end
    parts.append(body_html[pos:])
    return "".join(parts)


def page_sections(
    body_html: str, formulas_html: Iterable[str] = (), *, reference: bool = False
) -> list[tuple[str, str, str]]:
    """[(heading text, heading id, plain text)] of a rendered page body; the first has no heading.

    `formulas_html`: the typeset formulas that occur in the body (optional, for speed): each is swapped for a
    stand-in holding just its text before the body is tokenized (most of a math-heavy page's markup).
    `reference=True`: html.parser over the whole body, the slow reference the fast path must equal (tests)."""
    if not reference:
        for formula in formulas_html:
            stand_in = _formula_stand_in(formula)
            if stand_in is not None:
                body_html = body_html.replace(formula, stand_in)
        body_html = drop_katex_html(body_html)
    parser = _SectionSplitter()
    if reference or not parser.feed_fast(body_html):
        parser = _SectionSplitter()
        parser.feed(body_html)
        parser.close()
    out = []
    for i, s in enumerate(parser.sections):
        heading, text = clean(s["heading"]), clean("".join(s["parts"]))
        if i == 0 and not text:
            continue
        out.append((heading, s["id"], text))
    return out


_stand_ins: dict[str, str | None] = {}  # formula HTML → _formula_stand_in(), for this process
_STAND_IN_LIMIT = 50_000


def _formula_stand_in(formula_html: str) -> str | None:
    """`<span>text</span>` with the very same effect on the section splitter as the formula's HTML, or None when
    there is none that simple. That holds when the formula's markup only contributes text: balanced tags (but
    void and self-closing ones, which never reach the skip stack), none a heading, block, raw-text tag or <br>,
    so neither a section, a space nor a pending skip comes out of it — in a skipped region both leave the skip
    stack as they found it; elsewhere both add the same text."""
    if formula_html in _stand_ins:
        return _stand_ins[formula_html]
    stand_in = None
    open_tags: list[str] = []
    markup = drop_katex_html(formula_html)  # what page_sections() would have tokenized
    pos, n = 0, len(markup)
    while pos < n:
        m = _TOKEN_RE.match(markup, pos)
        if m is None:
            break
        pos = m.end()
        tag = (m.group("tag") or m.group("end") or "").lower()
        if tag in _NOT_TEXT_ONLY_TAGS:
            break
        if m.lastgroup == "start":
            if not m.group("selfclose") and tag not in VOID_TAGS:  # those two never reach the skip stack
                open_tags.append(tag)
        elif m.lastgroup == "end" and (not open_tags or open_tags.pop() != tag):
            break
    else:
        splitter = _SectionSplitter()
        if not open_tags and splitter.feed_fast(markup) and len(splitter.sections) == 1:
            stand_in = f"<span>{escape(''.join(splitter.sections[0]['parts']), quote=False)}</span>"
    if len(_stand_ins) >= _STAND_IN_LIMIT:
        _stand_ins.clear()
    _stand_ins[formula_html] = stand_in
    return stand_in


def cjk_grams(text: str) -> set[str]:
    """Every CJK character and every pair of adjacent CJK characters of `text`."""
    grams: set[str] = set()
    for run in CJK_RUN_RE.findall(text):
        grams.update(run)
        grams.update(run[i : i + 2] for i in range(len(run) - 1))
    return grams


def latin_words(text: str) -> set[str]:
    return set(WORD_RE.findall(text.lower()))


def page_search_sections(title: str, body_html: str, formulas_html: Iterable[str] = ()) -> list[SearchSection]:
    """page_sections() of a page with the terms each section is found by (the page title goes with its first
    section). Computed when the page body is rendered and cached with it (builder/page_cache.py), so a
    rebuild neither re-parses every page's HTML nor re-splits every page's text."""
    out = []
    for n, (heading, anchor, text) in enumerate(page_sections(body_html, formulas_html)):
        searchable = f"{title if n == 0 else ''} {heading} {text}"
        out.append(
            (heading, anchor, text, tuple(sorted(cjk_grams(searchable))), tuple(sorted(latin_words(searchable))))
        )
    return out


def build_index(pages: Iterable[tuple[str, str, str]]) -> dict:
    """Index of (url, title, body HTML) pages. Sections are [page number, heading, anchor, text]."""
    return build_index_from_sections((url, title, page_search_sections(title, html)) for url, title, html in pages)


def build_index_from_sections(pages: Iterable[tuple[str, str, list[SearchSection]]]) -> dict:
    """Index of (url, title, page_search_sections(title, body HTML)) pages."""
    index_pages: list[list[str]] = []
    sections: list[list] = []
    grams: dict[str, list[int]] = {}
    words: dict[str, list[int]] = {}
    for url, title, page_secs in pages:
        page_no = len(index_pages)
        index_pages.append([url, title])
        for heading, anchor, text, section_grams, section_words in page_secs:
            section_no = len(sections)
            sections.append([page_no, heading, anchor, text])
            for g in section_grams:
                postings = grams.get(g)
                if postings is None:
                    grams[g] = [section_no]
                else:
                    postings.append(section_no)
            for w in section_words:
                postings = words.get(w)
                if postings is None:
                    words[w] = [section_no]
                else:
                    postings.append(section_no)
    return {
        "v": INDEX_VERSION,
        "pages": index_pages,
        "sections": sections,
        "grams": dict(sorted(grams.items())),
        "words": dict(sorted(words.items())),
    }


def index_script(index: dict) -> bytes:
    payload = json.dumps(index, ensure_ascii=False, separators=(",", ":"))
    return browser_data_script("search", "index", payload)


def search_index_files(pages: list[Page], glossary: list[GlossaryTerm] | None = None) -> dict[str, bytes]:
    """{"assets/search-index.js": …} for the rendered pages (the index page is not searched). The glossary's
    groups of words (term, synonyms, English) go along: the browser searches a query's word as any of its group."""
    entries = [
        (
            p.source.url,
            p.source.title,
            p.facts.search_sections
            if p.facts.search_sections is not None
            else page_search_sections(p.source.title, p.body_html),
        )
        for p in pages
        if p.source.kind != "index"
    ]
    index = build_index_from_sections(entries)
    index["synonyms"] = [[t.term, *t.synonyms, *([t.english.lower()] if t.english else [])] for t in glossary or []]
    return {INDEX_FILE: index_script(index)}
