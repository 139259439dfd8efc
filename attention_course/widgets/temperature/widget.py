"""The `temperature` widget: one row of scores through softmax at every temperature of a slider's grid
(widget.js)."""

from __future__ import annotations

import math

import numpy as np
from markdown_it.common.utils import escapeHtml

from attention_core import Example, get_example
from builder.widgets.fallback import as_list, bars_list, entropy_bits, fmt, note_html, percent_row
from builder.widgets.quote import token_index, unexpected
from builder.widgets.schema import Option, Widget, num_text

MAX_TEMPERATURE_STEPS = 200  # the temperature grid is embedded in the page; keep it small


def temperature_check(o: dict) -> list[tuple[str, str]]:
    problems = []
    if o["min"] >= o["max"]:
        problems.append(
            ("min", f"option 'min' ({num_text(o['min'])}) must be smaller than 'max' ({num_text(o['max'])})")
        )
        return problems
    steps = (o["max"] - o["min"]) / o["step"]
    if abs(steps - round(steps)) > 1e-6:
        problems.append(
            (
                "step",
                f"option 'step' ({num_text(o['step'])}) must divide max − min "
                f"({num_text(o['max'] - o['min'])}) into whole steps",
            )
        )
    elif round(steps) > MAX_TEMPERATURE_STEPS:
        problems.append(
            (
                "step",
                f"option 'step' gives {round(steps) + 1} temperatures; at most {MAX_TEMPERATURE_STEPS + 1} are allowed",
            )
        )
    if not o["min"] <= o["value"] <= o["max"]:
        problems.append(
            (
                "value",
                f"option 'value' ({num_text(o['value'])}) must be between min ({num_text(o['min'])}) "
                f"and max ({num_text(o['max'])})",
            )
        )
    elif not problems and abs((o["value"] - o["min"]) / o["step"] - round((o["value"] - o["min"]) / o["step"])) > 1e-6:
        problems.append(
            ("value", f"option 'value' ({num_text(o['value'])}) must lie on the slider's grid (min + k × step)")
        )
    return problems


def temperature_grid(o: dict) -> list[float]:
    n = round((o["max"] - o["min"]) / o["step"])
    return [round(o["min"] + k * o["step"], 10) for k in range(n + 1)]


def temperature_compute(o: dict) -> dict:
    ex = get_example(o["example"])
    temps = temperature_grid(o)
    weights = np.array([ex.weights(temperature=t) for t in temps])
    return {
        "title": ex.title,
        "tokens": list(ex.tokens),
        "note": ex.note,
        "query": ex.query,
        "scores": as_list(ex.scores),
        "temperatures": temps,
        "weights": as_list(weights),
        "max_weight": as_list(weights.max(axis=1)),
        "entropy_bits": [entropy_bits(w) for w in weights],
        "max_entropy_bits": math.log2(ex.length),
        "value_index": round((o["value"] - o["min"]) / o["step"]),
    }


def temperature_fallback(d: dict) -> str:
    k = d["value_index"]
    t = d["temperatures"][k]
    rows = "".join(
        f'<tr><th scope="row">{fmt(temp, 1)}</th>'
        + "".join(f"<td>{p}</td>" for p in percent_row(ws))
        + f"<td>{fmt(h, 2)}</td></tr>"
        for temp, ws, h in zip(d["temperatures"], d["weights"], d["entropy_bits"])
        if abs(temp * 10 - round(temp * 10)) < 1e-9 and round(temp * 10) % 5 == 0 or temp in (d["temperatures"][0], t)
    )
    head = "".join(f'<th scope="col">{escapeHtml(tok)}</th>' for tok in d["tokens"])
    query = f"“{escapeHtml(d['query'])}”" if d.get("query") else "Query"
    return (
        f'<p class="widget-caption">{query} 的原始分数：'
        + "，".join(f"{escapeHtml(tok)} {fmt(s, 1)}" for tok, s in zip(d["tokens"], d["scores"]))
        + "</p>"
        + bars_list(d["tokens"], d["weights"][k], f"T = {fmt(t, 1)} 时的注意力权重")
        + '<details class="widget-more"><summary>不同温度下的权重表</summary>'
        '<div class="heat-scroll"><table class="num-table">'
        "<caption>不同温度 T 下的 softmax 权重（%）与熵（比特）</caption>"
        f'<thead><tr><th scope="col">T</th>{head}<th scope="col">熵</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        "</details>" + note_html(d["note"])
    )


def _needs_scores(ex: Example) -> str | None:
    return None if ex.scores is not None else "it has no raw scores"


def temperature_quote(data: dict, selectors: list[str], target: str) -> str:
    """`temperature T=1 小明`: the weight of a word at one temperature of the slider."""
    temps = [s[2:] for s in selectors if s.startswith("T=")]
    if len(temps) != 1 or len(selectors) != 1:
        raise unexpected("temperature", selectors, "one temperature T=<t>")
    try:
        k = next(k for k, t in enumerate(data["temperatures"]) if abs(t - float(temps[0])) < 1e-9)
    except (StopIteration, ValueError):
        raise ValueError(f"T={temps[0]} is not on the widget's slider") from None
    return f"{percent_row(data['weights'][k])[token_index(data['tokens'], target)]}%"


WIDGET = Widget(
    "temperature",
    "Softmax 温度",
    {
        "example": Option("example", "temperature-scores", "example id (must have raw scores)", rule=_needs_scores),
        "min": Option("number", 0.2, "lowest temperature", minimum=0.05, maximum=100),
        "max": Option("number", 4, "highest temperature", minimum=0.05, maximum=100),
        "step": Option("number", 0.1, "slider step", minimum=0.01, maximum=100),
        "value": Option("number", 1, "initial temperature", minimum=0.05, maximum=100),
    },
    temperature_compute,
    temperature_fallback,
    temperature_check,
    quote=temperature_quote,
)
