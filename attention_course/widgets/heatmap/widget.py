"""The `heatmap` widget: token × token attention weights of example sentences, with and without the causal
mask (widget.js draws it; the fallback is one static table per example)."""

from __future__ import annotations

from markdown_it.common.utils import escapeHtml

from attention_core import get_example
from builder.widgets.fallback import as_list, note_html, weights_table
from builder.widgets.quote import cell_percent, unexpected
from builder.widgets.schema import Option, Widget


def heatmap_compute(o: dict) -> dict:
    examples = []
    for ident in o["examples"]:
        ex = get_example(ident)
        causal = ex.trace(causal=True).weights
        full = ex.trace(causal=False).weights
        examples.append(
            {
                "id": ex.id,
                "title": ex.title,
                "tokens": list(ex.tokens),
                "note": ex.note,
                "weights": {"causal": as_list(causal), "none": as_list(full)},
                "row_sums": {"causal": as_list(causal.sum(axis=1)), "none": as_list(full.sum(axis=1))},
            }
        )
    return {"mask": o["mask"], "examples": examples}


def heatmap_fallback(d: dict) -> str:
    mode = d["mask"]
    parts = []
    for n, ex in enumerate(d["examples"]):
        L = len(ex["tokens"])
        mask = [[j <= i for j in range(L)] for i in range(L)] if mode == "causal" else None
        caption = f"{ex['title']}：注意力权重（%，{'因果遮罩' if mode == 'causal' else '无遮罩'}，示意）"
        table = weights_table(ex["tokens"], ex["weights"][mode], caption, mask, ex["row_sums"][mode])
        if n == 0:
            parts.append(table + note_html(ex["note"]))
        else:
            parts.append(
                f'<details class="widget-more"><summary>{escapeHtml(ex["title"])}</summary>{table}'
                f"{note_html(ex['note'])}</details>"
            )
    return "".join(parts)


MASKS = {"因果遮罩": "causal", "无遮罩": "none"}


def heatmap_quote(data: dict, selectors: list[str], target: str) -> str:
    """`heatmap <example-id> [因果遮罩|无遮罩] it→animal` (mask: the widget's initial state unless given)."""
    ids = [e["id"] for e in data["examples"]]
    if any(s not in ids and s not in MASKS for s in selectors):
        raise unexpected("heatmap", selectors, f"an example id of the widget ({', '.join(ids)}), 因果遮罩, 无遮罩")
    example = next((s for s in selectors if s in ids), ids[0])
    mask = next((MASKS[s] for s in selectors if s in MASKS), data["mask"])
    ex = data["examples"][ids.index(example)]
    return f"{cell_percent(ex['tokens'], ex['weights'][mask], target)}%"


WIDGET = Widget(
    "heatmap",
    "注意力热力图",
    {
        "examples": Option("examples", ["cat-fast", "animal-tired", "animal-wide"], "example ids, first shown first"),
        "mask": Option("choice", "causal", "initial state of the causal-mask toggle", choices=("causal", "none")),
    },
    heatmap_compute,
    heatmap_fallback,
    quote=heatmap_quote,
)
