"""What ``{data}`…` `` (builder/markdown/widget_quote.py) resolves to: a number a widget of the page shows.

The spec is `<kind> [selectors…] <target>`, read against the first widget of that kind on the page by its kind's
`Widget.quote(data, selectors, target)`. Most kinds look the name up in their data's `quotes` table with
`quote_named` (`<kind> <name>`, the entry's text as is); kinds with a weight matrix use `cell_percent`
(`<query>→<key>`), which reads the number the widget draws: the row rounded with `percent_row`, so it adds up
with its row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .fallback import percent_row


def quote_named(data: dict, selectors: list[str], target: str) -> str:
    """`Widget.quote` for a widget whose data names its quotable numbers: `quotes` maps a name (the words after the
    kind, joined by spaces) to the text the widget shows, computed at build time."""
    name = " ".join([*selectors, target])
    quotes = data.get("quotes", {})
    if name not in quotes:
        raise ValueError(f"no number called '{name}' (e.g. {'、'.join(list(quotes)[:8])} …)")
    return quotes[name]


def token_index(tokens: list[str], word: str) -> int:
    hits = [i for i, t in enumerate(tokens) if t == word]
    if not hits:
        raise ValueError(f"'{word}' is not a word of the widget's sentence ({' '.join(tokens)})")
    if len(hits) > 1:
        raise ValueError(f"'{word}' occurs {len(hits)} times in the widget's sentence")
    return hits[0]


def query_key(word: str) -> tuple[str, str]:
    query, arrow, key = word.partition("→")
    if not arrow or not query or not key:
        raise ValueError("give the cell as <query>→<key>, e.g. 他→小明")
    return query, key


def cell_percent(tokens: list[str], matrix: list[list[float]], word: str) -> int:
    query, key = query_key(word)
    i, j = token_index(tokens, query), token_index(tokens, key)
    return percent_row(matrix[i])[j]


def quote_widget(widgets: Sequence[Any], spec: str) -> str:
    words = spec.split()
    if len(words) < 2:
        raise ValueError("write the widget kind, then the number: e.g. {data}`query-focus 他→小明`")
    kind, *selectors, target = words
    blocks = [w for w in widgets if w.name == kind]
    if not blocks:
        raise ValueError(f"there is no {kind} widget on this page")
    if blocks[0].widget.quote is None:
        raise ValueError(f"{kind} widgets have no quotable numbers")
    # several widgets of a kind on one page: the first (in page order) that has this number
    first_error: ValueError | None = None
    for block in blocks:
        try:
            return block.widget.quote(block.data, selectors, target)
        except ValueError as exc:
            first_error = first_error or exc
    raise first_error


def unexpected(kind: str, selectors: list[str], allowed: str) -> ValueError:
    """The error for selectors a kind's `quote` does not take."""
    return ValueError(f"unexpected selector(s) {' '.join(selectors)!r} for {kind} (allowed: {allowed})")
