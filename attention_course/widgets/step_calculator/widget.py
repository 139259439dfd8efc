"""The `step-calculator` widget: one query's attention worked out step by step — scores, scaling, softmax,
weighted sum (widget.js)."""

from __future__ import annotations

import math

import numpy as np
from markdown_it.common.utils import escapeHtml

from attention_core import get_example
from builder.widgets.fallback import as_list, fmt, note_html, percent_row_even
from builder.widgets.quote import query_key, token_index, unexpected
from builder.widgets.schema import Option, Widget


def step_check(o: dict) -> list[tuple[str, str]]:
    ex = get_example(o["example"])
    if not 0 <= o["query"] < ex.length:
        return [
            (
                "query",
                f"option 'query' must be a word index between 0 and {ex.length - 1} "
                f"({' '.join(f'{i}={t}' for i, t in enumerate(ex.tokens))}), got {o['query']}",
            )
        ]
    return []


def step_compute(o: dict) -> dict:
    ex = get_example(o["example"])
    tr = ex.trace()
    with np.errstate(under="ignore"):
        exp = np.exp(tr.masked)  # e^(score/√d_k); masked (−∞) keys give exactly 0
    contributions = tr.weights[:, :, None] * tr.V[None, :, :]  # [i, j] = w_ij · v_j
    return {
        "title": ex.title,
        "tokens": list(ex.tokens),
        "note": ex.note,
        "query": o["query"],
        "d_k": tr.d_k,
        "sqrt_dk": math.sqrt(tr.d_k),
        "Q": as_list(tr.Q),
        "K": as_list(tr.K),
        "V": as_list(tr.V),
        "scores": as_list(tr.scores),
        "scaled": as_list(tr.scaled),
        "exp": as_list(exp),
        "exp_sum": as_list(exp.sum(axis=1)),
        "weights": as_list(tr.weights),
        "contributions": as_list(contributions),
        "output": as_list(tr.output),
        "mask": None if tr.mask is None else tr.mask.tolist(),
    }


def _vec(v: list[float]) -> str:
    return "[" + ", ".join(fmt(x) for x in v) + "]"


def shown_weights(weights: list[float]) -> list[str]:
    """A row's softmax weights as the widget shows them (steps ③ and ④): percents with one decimal, equal weights
    alike (`percent_row_even`; theme/js/widgets/common.js `pctRowEven` in the live view)."""
    return percent_row_even(weights, 1)


def total_note(weights: list[float], shown: list[str]) -> str:
    """A sentence under the row when its shown percents do not add up to its total (equal weights that cannot share
    the last 0.1 %): why, so the reader does not take it for a mistake; empty when they do add up."""
    shown_total = sum(round(float(x) * 10) for x in shown)
    total = round(sum(weights) * 1000)
    if shown_total == total:
        return ""
    return (
        f"这一行显示的百分数合计 {shown_total / 10:.1f}%，真实的权重合计是 {total / 10:.1f}%：有几个权重完全相等，"
        f"保留一位小数时要显示成同一个数，差出的 {abs(shown_total - total) / 10:.1f}% 没法平分给它们，"
        "差别只出在显示上。"
    )


def step_fallback(d: dict) -> str:
    i = d["query"]
    toks = d["tokens"]
    shown = shown_weights(d["weights"][i])
    why = total_note(d["weights"][i], shown)
    rows = "".join(
        f'<tr><th scope="row">{escapeHtml(t)}</th><td>{_vec(d["K"][j])}</td><td>{fmt(d["scores"][i][j])}</td>'
        f"<td>{fmt(d['scaled'][i][j])}</td><td>{shown[j]}%</td><td>{_vec(d['V'][j])}</td></tr>"
        for j, t in enumerate(toks)
    )
    return (
        f'<p class="widget-caption">Query：“{escapeHtml(toks[i])}”，q = {_vec(d["Q"][i])}，'
        f"d<sub>k</sub> = {d['d_k']}，√d<sub>k</sub> ≈ {fmt(d['sqrt_dk'], 3)}</p>"
        '<div class="heat-scroll"><table class="num-table">'
        f"<caption>“{escapeHtml(toks[i])}”的四步计算（示意）</caption>"
        '<thead><tr><th scope="col">Key 词</th><th scope="col">k</th><th scope="col">① q·k</th>'
        '<th scope="col">② ÷√d<sub>k</sub></th><th scope="col">③ softmax</th><th scope="col">v</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        + (f'<p class="widget-caption step-total">{escapeHtml(why)}</p>' if why else "")
        + f'<p class="widget-caption">④ 加权求和得到新向量：{_vec(d["output"][i])}</p>'
        + note_html(d["note"])
    )


def step_calculator_quote(data: dict, selectors: list[str], target: str) -> str:
    """`step-calculator 他→小明`: the percentage the widget shows for that query and key (one decimal)."""
    if selectors:
        raise unexpected("step-calculator", selectors, "none")
    query, key = query_key(target)
    i, j = token_index(data["tokens"], query), token_index(data["tokens"], key)
    return f"{shown_weights(data['weights'][i])[j]}%"


WIDGET = Widget(
    "step-calculator",
    "分步计算器：一步一步算注意力",
    {
        "example": Option("example", "four-words", "example id"),
        "query": Option("integer", 0, "index of the initial query word", minimum=0),
    },
    step_compute,
    step_fallback,
    step_check,
    quote=step_calculator_quote,
)
