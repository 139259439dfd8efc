"""The `multi-head` widget: every head's attention of one example side by side, their concatenation and the
output after W_O (widget.js)."""

from __future__ import annotations

from attention_core import Example, get_example
from builder.widgets.fallback import as_list, matrix_table, note_html, weights_table
from builder.widgets.quote import cell_percent, unexpected
from builder.widgets.schema import Option, Widget


def multi_head_check(o: dict) -> list[tuple[str, str]]:
    ex = get_example(o["example"])
    if ex.X is None:
        return [("example", f"example '{ex.id}' cannot be used by the multi-head widget: it has no embeddings")]
    return []


def multi_head_compute(o: dict) -> dict:
    ex = get_example(o["example"])
    tr = ex.multi_head_trace()
    h = tr.num_heads
    d_out = tr.output.shape[-1]
    labels = (
        list(ex.feature_labels)
        if len(ex.feature_labels) == d_out and ex.W_O is not None
        else [f"维度 {k}" for k in range(d_out)]
    )
    return {
        "title": ex.title,
        "tokens": list(ex.tokens),
        "note": ex.note,
        "num_heads": h,
        "d_v": tr.d_v,
        "head_labels": list(ex.head_labels) or [f"头 {k}" for k in range(h)],
        "causal": ex.causal,
        "query": ex.index(ex.query) if ex.query in ex.tokens else 0,
        "weights": as_list(tr.weights),
        "concat": as_list(tr.concat),
        "output": as_list(tr.output),
        "output_labels": labels,
        "has_wo": ex.W_O is not None,
    }


def concat_labels(d: dict) -> list[str]:
    return [f"头{k // d['d_v']}·{k % d['d_v']}" for k in range(d["num_heads"] * d["d_v"])]


def multi_head_fallback(d: dict) -> str:
    L = len(d["tokens"])
    mask = [[j <= i for j in range(L)] for i in range(L)] if d["causal"] else None
    heads = "".join(
        f'<div class="mh-head">{weights_table(d["tokens"], w, f"头 {k}：{label}（%）", mask)}</div>'
        for k, (w, label) in enumerate(zip(d["weights"], d["head_labels"]))
    )
    block = lambda j: f"mh-block-{(j // d['d_v']) % 3}"  # noqa: E731
    return (
        f'<div class="mh-heads">{heads}</div>'
        + matrix_table(d["tokens"], concat_labels(d), d["concat"], "拼接（concat）：各头输出并排", block)
        + matrix_table(d["tokens"], d["output_labels"], d["output"], "经 W_O 融合后的输出")
        + note_html(d["note"])
    )


def _needs_embeddings(ex: Example) -> str | None:
    return None if ex.X is not None else "it has no embeddings (a score-only example)"


def multi_head_quote(data: dict, selectors: list[str], target: str) -> str:
    """`multi-head 头1 他→小明`: one head's percentage for that query and key."""
    heads = [int(s[1:]) for s in selectors if s.startswith("头") and s[1:].isdigit()]
    if len(heads) != 1 or len(selectors) != 1 or not 0 <= heads[0] < len(data["weights"]):
        raise unexpected("multi-head", selectors, f"one head 头0 … 头{len(data['weights']) - 1}")
    return f"{cell_percent(data['tokens'], data['weights'][heads[0]], target)}%"


WIDGET = Widget(
    "multi-head",
    "多头注意力：几个头各看各的",
    {
        "example": Option("example", "multi-head", "example id", rule=_needs_embeddings),
    },
    multi_head_compute,
    multi_head_fallback,
    multi_head_check,
    quote=multi_head_quote,
)
