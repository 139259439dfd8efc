"""Search index, built once per site from the rendered pages and embedded as a classic script.

`assets/search-index.js` sets `window.__COURSE_SEARCH_INDEX__` (fetch is blocked on file://, a <script src>
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
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from .site import Page

INDEX_FILE = "assets/search-index.js"
GLOBAL_NAME = "__COURSE_SEARCH_INDEX__"
INDEX_VERSION = 1

CJK_RUN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
WORD_RE = re.compile(r"[a-z0-9]+")
SPACE_RE = re.compile(r"\s+")

SECTION_TAGS = {"h2", "h3", "h4"}
# Never indexed: scripts (widget data JSON), drawings, KaTeX's visual copy of a formula (its MathML copy is
# kept), the TeX source inside MathML, permalink "#", interactive controls, widgets' number tables and data,
# and code cells' outputs.
SKIP_TAGS = {"script", "style", "template", "svg", "annotation", "button", "noscript", "select", "textarea"}
SKIP_CLASSES = {"heading-anchor", "katex-html", "cell-output", "quiz-actions", "quiz-result", "widget-body"}
BLOCK_TAGS = {"p", "div", "li", "ul", "ol", "section", "aside", "figure", "figcaption", "table", "tr", "td", "th",
              "pre", "blockquote", "details", "summary", "h1", "h2", "h3", "h4", "h5", "h6", "br", "legend", "dd", "dt"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _SectionSplitter(HTMLParser):
    """Plain text of a rendered page body, cut at headings."""

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
        if tag in SECTION_TAGS:
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
        if tag in SECTION_TAGS and self.heading is not None:
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


def page_sections(body_html: str) -> list[tuple[str, str, str]]:
    """[(heading text, heading id, plain text)] of a rendered page body; the first has no heading."""
    parser = _SectionSplitter()
    parser.feed(drop_katex_html(body_html))
    parser.close()
    out = []
    for i, s in enumerate(parser.sections):
        heading, text = clean(s["heading"]), clean("".join(s["parts"]))
        if i == 0 and not text:
            continue
        out.append((heading, s["id"], text))
    return out


def cjk_grams(text: str) -> set[str]:
    """Every CJK character and every pair of adjacent CJK characters of `text`."""
    grams: set[str] = set()
    for run in CJK_RUN_RE.findall(text):
        grams.update(run)
        grams.update(run[i : i + 2] for i in range(len(run) - 1))
    return grams


def latin_words(text: str) -> set[str]:
    return set(WORD_RE.findall(text.lower()))


# A page's sections with their index terms: (heading, anchor id, plain text, CJK grams, Latin words).
SearchSection = tuple[str, str, str, tuple[str, ...], tuple[str, ...]]


def page_search_sections(title: str, body_html: str) -> list[SearchSection]:
    """page_sections() of a page with the terms each section is found by (the page title goes with its first
    section). Computed when the page body is rendered and cached with it (builder/incremental.py), so a
    rebuild neither re-parses every page's HTML nor re-splits every page's text."""
    out = []
    for n, (heading, anchor, text) in enumerate(page_sections(body_html)):
        searchable = f"{title if n == 0 else ''} {heading} {text}"
        out.append((heading, anchor, text, tuple(sorted(cjk_grams(searchable))), tuple(sorted(latin_words(searchable)))))
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
    return {"v": INDEX_VERSION, "pages": index_pages, "sections": sections,
            "grams": dict(sorted(grams.items())), "words": dict(sorted(words.items()))}


def index_script(index: dict) -> bytes:
    payload = json.dumps(index, ensure_ascii=False, separators=(",", ":"))
    return f"window.{GLOBAL_NAME}={payload};\n".encode("utf-8")


SECTIONS_ENV_KEY = "search_sections"  # a page's page_search_sections(), stored when its body is rendered


def search_index_files(pages: list["Page"]) -> dict[str, bytes]:
    """{"assets/search-index.js": …} for the rendered pages (the index page is not searched)."""
    entries = [(p.source.url, p.source.title, p.env[SECTIONS_ENV_KEY] if SECTIONS_ENV_KEY in p.env
                else page_search_sections(p.source.title, p.body_html)) for p in pages if p.source.kind != "index"]
    return {INDEX_FILE: index_script(build_index_from_sections(entries))}
