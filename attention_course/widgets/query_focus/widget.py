"""The `query-focus` widget: click a word, see how its attention is spread over the sentence (bars and a
highlighted sentence; widget.js)."""

from __future__ import annotations

from markdown_it.common.utils import escapeHtml

from attention_core import get_example
from builder.widgets.fallback import as_list, bars_list, css_number, ink_classes, note_html, weights_table
from builder.widgets.quote import cell_percent, unexpected
from builder.widgets.schema import Option, Widget


def query_focus_check(o: dict) -> list[tuple[str, str]]:
    ex = get_example(o["example"])
    if o["query"] is not None and o["query"] not in ex.tokens:
        return [
            ("query", f"option 'query': {o['query']!r} is not a token of example '{ex.id}' ({' '.join(ex.tokens)})")
        ]
    return []


def query_focus_compute(o: dict) -> dict:
    ex = get_example(o["example"])
    query = o["query"] if o["query"] is not None else (ex.query if ex.query in ex.tokens else ex.tokens[0])
    return {
        "title": ex.title,
        "tokens": list(ex.tokens),
        "note": ex.note,
        "query": ex.index(query),
        "weights": as_list(ex.trace().weights),
    }


def query_focus_fallback(d: dict) -> str:
    q = d["query"]
    tok = d["tokens"][q]
    sentence = "".join(
        f'<span class="{" ".join(["qf-token", *(["is-query"] if i == q else []), *ink_classes(w)])}" '
        f'style="--w:{css_number(w)}">{escapeHtml(t)}</span>'
        for i, (t, w) in enumerate(zip(d["tokens"], d["weights"][q]))
    )
    return (
        f'<p class="qf-sentence">{sentence}</p>'
        f'<p class="widget-caption">Query：“{escapeHtml(tok)}”分给每个词的注意力权重</p>'
        + bars_list(d["tokens"], d["weights"][q], f"“{tok}”的注意力权重")
        + '<details class="widget-more"><summary>每个词作为 Query 时的权重表</summary>'
        + weights_table(d["tokens"], d["weights"], "全部词的注意力权重（%，每行是一个 Query，示意）")
        + "</details>"
        + note_html(d["note"])
    )


def query_focus_quote(data: dict, selectors: list[str], target: str) -> str:
    """`query-focus 他→小明`: the percentage the widget shows for that query and key."""
    if selectors:
        raise unexpected("query-focus", selectors, "none")
    return f"{cell_percent(data['tokens'], data['weights'], target)}%"


WIDGET = Widget(
    "query-focus",
    "点一个词，看它在关注谁",
    {
        "example": Option("example", "xiaoming", "example id"),
        "query": Option("text", None, "initially selected token (default: the example's query, e.g. 他)"),
    },
    query_focus_compute,
    query_focus_fallback,
    query_focus_check,
    quote=query_focus_quote,
)
