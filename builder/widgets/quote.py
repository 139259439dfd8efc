"""What ``{data}`…` `` (builder/markdown/widget_quote.py) resolves to: the percentage a widget of the page shows.

The spec is `<kind> [selectors] <query>→<key>` (temperature: `<kind> T=<t> <key>`), read against the first
widget of that kind on the page:
- `heatmap <example-id> [因果遮罩|无遮罩] it→animal` (mask: the widget's initial state unless given)
- `query-focus 他→小明`, `step-calculator 我→爱`
- `multi-head 头1 他→小明`
- `temperature T=1 小明`
- any other widget that sets `Widget.quote(data, selectors, target)`; most look the name up in their data's `quotes`
  table with `quote_named` (qkv-projection, kv-cache, activation-plot, …): `<kind> <name>`, the entry's text as is
The number is the one the widget draws: the row rounded with `percent_row`, so it adds up with its row.
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


def _index(tokens: list[str], word: str) -> int:
    hits = [i for i, t in enumerate(tokens) if t == word]
    if not hits:
        raise ValueError(f"'{word}' is not a word of the widget's sentence ({' '.join(tokens)})")
    if len(hits) > 1:
        raise ValueError(f"'{word}' occurs {len(hits)} times in the widget's sentence")
    return hits[0]


def _pair(word: str) -> tuple[str, str]:
    query, arrow, key = word.partition("→")
    if not arrow or not query or not key:
        raise ValueError("give the cell as <query>→<key>, e.g. 他→小明")
    return query, key


def _cell(tokens: list[str], matrix: list[list[float]], word: str) -> int:
    query, key = _pair(word)
    i, j = _index(tokens, query), _index(tokens, key)
    return percent_row(matrix[i])[j]


def quote_widget(widgets: Sequence[Any], spec: str) -> str:
    words = spec.split()
    if len(words) < 2:
        raise ValueError("write the widget kind, then the cell: e.g. {data}`query-focus 他→小明`")
    kind, *selectors, target = words
    block = next((w for w in widgets if w.name == kind), None)
    if block is None:
        raise ValueError(f"there is no {kind} widget on this page")
    data = block.data

    def unexpected(allowed: str) -> ValueError:
        return ValueError(f"unexpected selector(s) {' '.join(selectors)!r} for {kind} (allowed: {allowed})")

    if kind == "heatmap":
        ids = [e["id"] for e in data["examples"]]
        example = next((s for s in selectors if s in ids), ids[0])
        masks = {"因果遮罩": "causal", "无遮罩": "none"}
        mask = next((masks[s] for s in selectors if s in masks), data["mask"])
        if any(s not in ids and s not in masks for s in selectors):
            raise unexpected(f"an example id of the widget ({', '.join(ids)}), 因果遮罩, 无遮罩")
        ex = data["examples"][ids.index(example)]
        value = _cell(ex["tokens"], ex["weights"][mask], target)
    elif kind in ("query-focus", "step-calculator"):
        if selectors:
            raise unexpected("none")
        value = _cell(data["tokens"], data["weights"], target)
    elif kind == "multi-head":
        heads = [int(s[1:]) for s in selectors if s.startswith("头") and s[1:].isdigit()]
        if len(heads) != 1 or len(selectors) != 1 or not 0 <= heads[0] < len(data["weights"]):
            raise unexpected(f"one head 头0 … 头{len(data['weights']) - 1}")
        value = _cell(data["tokens"], data["weights"][heads[0]], target)
    elif kind == "temperature":
        temps = [s[2:] for s in selectors if s.startswith("T=")]
        if len(temps) != 1 or len(selectors) != 1:
            raise unexpected("one temperature T=<t>")
        try:
            k = next(k for k, t in enumerate(data["temperatures"]) if abs(t - float(temps[0])) < 1e-9)
        except (StopIteration, ValueError):
            raise ValueError(f"T={temps[0]} is not on the widget's slider") from None
        value = percent_row(data["weights"][k])[_index(data["tokens"], target)]
    elif block.widget.quote is not None:  # a widget module that quotes its own data (Widget.quote)
        return block.widget.quote(data, selectors, target)
    else:
        raise ValueError(f"{kind} widgets have no quotable numbers")
    return f"{value}%"
