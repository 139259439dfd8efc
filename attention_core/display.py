"""Show a learner's own attention weights with the site's interactive widgets, from a code cell.

    from attention_core.display import show_attention, show_row
    show_attention(weights, tokens)      # the token × token heatmap the course's pages use
    show_row(weights[2], tokens)         # one query's weights as a bar chart

In a code cell (the browser's Pyodide or the build) these send JSON — never HTML — through the cell
runtime's `display` (the engine's cell_runtime.py); the page mounts the same heatmap module as the
widgets (attention_course/widgets/heatmap/widget.js).  Anywhere else they print a plain-text table.  The weights are
checked first: a clear ValueError names what is wrong (shape, tokens, negative or non-finite values).
"""

from __future__ import annotations

import json
import sys

import numpy as np

WIDGET_KIND = "application/vnd.course.widget+json"
MAX_TOKENS = 64


def _tokens(tokens, n: int) -> list[str]:
    if tokens is None:
        return [str(i + 1) for i in range(n)]
    tokens = [str(t) for t in tokens]
    if len(tokens) != n:
        raise ValueError(f"tokens has {len(tokens)} entries but the weights have {n}")
    return tokens


def _check(w: np.ndarray) -> None:
    if not np.all(np.isfinite(w)):
        raise ValueError("weights contain NaN or inf")
    if np.any(w < 0):
        raise ValueError("weights must be ≥ 0 (attention weights are softmax outputs)")


def attention_widget(weights, tokens=None, *, title: str = "你的注意力矩阵", note: str = "") -> dict:
    """The heatmap widget's data ({widget, data}) for an n × n weight matrix (rows: queries, columns: keys)."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] == 0:
        raise ValueError(f"show_attention expects a square n × n matrix, got shape {w.shape}")
    if w.shape[0] > MAX_TOKENS:
        raise ValueError(f"at most {MAX_TOKENS} tokens, got {w.shape[0]}")
    _check(w)
    toks = _tokens(tokens, w.shape[0])
    # 4 decimals: the heatmap shows whole percents and shades in 1 % steps; "none" only (no mask toggle)
    rows = [[round(float(x), 4) for x in row] for row in w]
    sums = [round(float(s), 4) for s in w.sum(axis=1)]
    example = {
        "id": "cell",
        "title": str(title),
        "tokens": toks,
        "note": str(note),
        "weights": {"none": rows},
        "row_sums": {"none": sums},
    }
    return {"widget": "heatmap", "data": {"mask": "none", "fixed": True, "examples": [example]}}


def row_widget(row, tokens=None, *, query: str | None = None, title: str = "一行注意力权重") -> dict:
    """The bar-chart data ({widget, data}) of one query's weights over the keys."""
    r = np.asarray(row, dtype=float)
    if r.ndim != 1 or r.shape[0] == 0:
        raise ValueError(f"show_row expects one row (a 1-D array), got shape {r.shape}")
    if r.shape[0] > MAX_TOKENS:
        raise ValueError(f"at most {MAX_TOKENS} tokens, got {r.shape[0]}")
    _check(r)
    toks = _tokens(tokens, r.shape[0])
    return {
        "widget": "heatmap",
        "data": {
            "mask": "none",
            "fixed": True,
            "bars": True,
            "query": query,
            "title": str(title),
            "tokens": toks,
            "row": [round(float(x), 4) for x in r],
        },
    }


def _send(spec: dict) -> None:
    runtime = sys.modules.get("cell_runtime")  # the cells' executor, in the browser and at build time
    if runtime is not None and hasattr(runtime, "display"):
        runtime.display(WIDGET_KIND, json.dumps(spec, ensure_ascii=False, separators=(",", ":")), {})
        return
    data = spec["data"]
    if data.get("bars"):
        width = max(len(t) for t in data["tokens"])
        for tok, w in zip(data["tokens"], data["row"]):
            print(f"{tok:>{width}}  {w * 100:5.1f}%  {'█' * round(w * 40)}")
    else:
        ex = data["examples"][0]
        print("\t" + "\t".join(ex["tokens"]))
        for tok, row in zip(ex["tokens"], ex["weights"]["none"]):
            print(tok + "\t" + "\t".join(f"{w * 100:.0f}%" for w in row))


def show_attention(weights, tokens=None, *, title: str = "你的注意力矩阵", note: str = "") -> None:
    """Show an n × n attention matrix as the site's interactive heatmap (rows: queries, columns: keys)."""
    _send(attention_widget(weights, tokens, title=title, note=note))


def show_row(row, tokens=None, *, query: str | None = None, title: str = "一行注意力权重") -> None:
    """Show one query's attention weights over the keys as a bar chart."""
    _send(row_widget(row, tokens, query=query, title=title))
