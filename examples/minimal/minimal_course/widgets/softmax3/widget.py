"""The `softmax3` widget: three scores and their softmax weights. The build computes the weights of the author's
scores (the fallback table, readable without JavaScript); widget.js lets the reader move the scores and recomputes
the same softmax live."""

from __future__ import annotations

import math

from markdown_it.common.utils import escapeHtml

from builder.widgets.fallback import fmt, percent_row
from builder.widgets.schema import Option, Widget

NAMES = ("a", "b", "c")


def softmax(scores: list[float], temperature: float = 1.0) -> list[float]:
    top = max(scores)
    exps = [math.exp((s - top) / temperature) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def compute(options: dict) -> dict:
    scores = [float(options[n]) for n in NAMES]
    return {"names": list(NAMES), "scores": scores, "weights": softmax(scores), "label": options["label"]}


def fallback(data: dict) -> str:
    rows = "".join(
        f'<tr><th scope="row">{escapeHtml(n)}</th><td>{fmt(s, 1)}</td><td>{p}%</td></tr>'
        for n, s, p in zip(data["names"], data["scores"], percent_row(data["weights"]))
    )
    return (
        f'<table class="num-table softmax3-table"><caption>{escapeHtml(data["label"])}</caption>'
        '<thead><tr><th scope="col">名字</th><th scope="col">分数</th><th scope="col">权重</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def check(options: dict) -> list[tuple[str, str]]:
    if len({options[n] for n in NAMES}) == 1:
        return [("c", "the three scores are all equal: give them different values to show something")]
    return []


WIDGET = Widget(
    "softmax3",
    "三个数的 softmax",
    {
        "a": Option("number", 2, "the first score", minimum=-5, maximum=5),
        "b": Option("number", 1, "the second score", minimum=-5, maximum=5),
        "c": Option("number", 0.1, "the third score", minimum=-5, maximum=5),
        "label": Option("text", "三个分数与它们的 softmax 权重", "the table's caption"),
    },
    compute,
    fallback,
    check,
)
