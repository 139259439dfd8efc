"""The element ids the theme and the build's own renderers put on a page, which an author's id must not take.

A heading `{#course-data}` or a raw `<div id="main">` placed before the theme's element of that id makes
`document.getElementById` find the author's instead: the page's progress then reads as empty, the skip link jumps
to the wrong place, a widget mounts into a heading. So an id the author writes (explicit heading ids, raw HTML,
inlined figures) that is one of these is an error, and a heading whose *automatic* id would be one gets another.

`tests/engine/test_guard_inputs.py` keeps this list true: every id literal of theme/templates/ and theme/js/ and
every id the renderers write must match it.
"""

from __future__ import annotations

import re

THEME_IDS: dict[str, str] = {
    "main": "the page's main content (templates, skip link)",
    "course-data": "the course data the page's progress reads (templates/base.html)",
    "header-tools": "the header's tools (templates/partials/header.html)",
    "lazy-widget-scripts": "the widget scripts' list (templates/partials/widget-scripts.html)",
    "progress-title": "the index's progress box (templates/index.html)",
    "progress-confirm-text": "the index's progress box (templates/index.html)",
    "nf-q": "the 404 page's search field (templates/404.html)",
    "search-dialog-title": "the search dialog (theme/js/site/search.js)",
    "search-results": "the search dialog (theme/js/site/search.js)",
    "live-build-problems": "the authoring server's problem overlay (builder/serve.py)",
}

GENERATED_IDS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"widget-\d+(-.*)?"), "the page's widgets (widget-1, widget-1-title, …)"),
    (re.compile(r"cell-.+"), "the page's code cells and the widgets they show (cell-<id>, cell-widget-1)"),
    (re.compile(r"quiz-.+"), "the page's quizzes (quiz-<id>, quiz-<id>-q, …)"),
    (re.compile(r"gloss-\d+"), "the glossary's tooltips (gloss-1, …)"),
    (re.compile(r"katex-path-\d+"), "the formulas' shared drawings (katex-path-1, …)"),
    (re.compile(r"search-result-\d+"), "the search dialog's results"),
    (re.compile(r"outline-.+"), "the index's sections (outline-<kind>, outline-<kind>-lead)"),
]


def reserved_id(ident: str) -> str | None:
    """Who uses `ident` on every page (a description), or None when an author may use it."""
    if ident in THEME_IDS:
        return THEME_IDS[ident]
    for pattern, owner in GENERATED_IDS:
        if pattern.fullmatch(ident):
            return owner
    return None


def reserved_message(ident: str, what: str = "element") -> str | None:
    owner = reserved_id(ident)
    if owner is None:
        return None
    return f"id '{ident}' is taken by {owner}: give this {what} another id"


__all__ = ["GENERATED_IDS", "THEME_IDS", "reserved_id", "reserved_message"]
