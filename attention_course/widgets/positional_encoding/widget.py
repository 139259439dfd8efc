"""The `positional-encoding` widget: the sinusoidal position encoding of Vaswani et al. 2017 as a heatmap
(positions × dimensions, one dimension count at a time) and the cosine similarity of one position to every other
(attention_core/positional.py computes both; widget.js draws them on a canvas and in
an SVG chart). The encodings travel quantised to signed bytes (value × 127), base64 — 48 positions × 248 columns
are ≈ 16 KB, a fifth of the JSON — in a data script of their own, with the similarities, that the widget loads
when it mounts (its page script is lazy: it loads when the widget nears the viewport), so they do not weigh on the
page's first view."""

from __future__ import annotations

import base64
import json

import numpy as np
from markdown_it.common.utils import escapeHtml

from attention_core.positional import offset_similarity, sinusoidal_encoding
from builder.bundle import widget_data_script
from builder.widgets.fallback import fmt
from builder.widgets.schema import Option, OptionError, Widget

QUANT = 127  # a value v ∈ [−1, 1] travels as round(v · 127), one signed byte
FALLBACK_POSITIONS = 8
FALLBACK_DIMS = 8


class DimsOption(Option):
    """A list of distinct even dimension counts, 2 … 256, in increasing order."""

    def check(self, name: str, value, *_):
        if not isinstance(value, list) or not value:
            raise OptionError(f"option '{name}' must be a non-empty list of even dimension counts, e.g. [16, 32, 64]")
        for i, d in enumerate(value):
            if isinstance(d, bool) or not isinstance(d, int) or d < 2 or d > 256 or d % 2:
                raise OptionError(
                    f"option '{name}': every dimension count must be an even integer from 2 to 256, got {d!r}", item=i
                )
            if i and d <= value[i - 1]:
                raise OptionError(f"option '{name}' must list the counts in increasing order without repeats", item=i)
        return list(value)


def check(o: dict) -> list[tuple[str, str]]:
    problems = []
    if o["dim"] not in o["dims"]:
        problems.append(
            ("dim", f"option 'dim' ({o['dim']}) must be one of the listed dims ({', '.join(map(str, o['dims']))})")
        )
    if o["position"] >= o["positions"]:
        problems.append(
            ("position", f"option 'position' ({o['position']}) must be smaller than 'positions' ({o['positions']})")
        )
    return problems


def quantised(pe: np.ndarray) -> str:
    return base64.b64encode(np.rint(pe * QUANT).astype(np.int8).tobytes()).decode("ascii")


def compute(o: dict) -> dict:
    n, base = o["positions"], o["base"]
    encodings = []
    for d in o["dims"]:
        pe = sinusoidal_encoding(n, d, base)
        encodings.append(
            {
                "dims": d,
                "pe": quantised(pe),
                "similarity": offset_similarity(n, d, base).tolist(),
                "corner": pe[:FALLBACK_POSITIONS, :FALLBACK_DIMS].tolist(),
            }
        )
    return {
        "positions": n,
        "base": base,
        "quant": QUANT,
        "encodings": encodings,
        "dim_index": o["dims"].index(o["dim"]),
        "position": o["position"],
    }


def build_data(o: dict, build) -> tuple[dict, dict[str, bytes]]:
    """The quantised encodings and the similarities go to a data script (the fallback, at build time, reads the
    similarities and the corner from `data`; the page carries neither: `embedded`)."""
    data = compute(o)
    payload = json.dumps(
        {
            str(e["dims"]): {"pe": e.pop("pe"), "similarity": [round(s, 6) for s in e["similarity"]]}
            for e in data["encodings"]
        },
        separators=(",", ":"),
        sort_keys=True,
    )
    where, files = widget_data_script("positional-encoding", "positionalEncoding", payload)
    data.update(where)
    return data, files


def embedded(d: dict) -> dict:
    """The data as the page carries it: the numbers are in the data script, the corner is the fallback's only."""
    return {**d, "encodings": [{"dims": e["dims"]} for e in d["encodings"]]}


def fallback(d: dict) -> str:
    e = d["encodings"][d["dim_index"]]
    buttons = "".join(
        f'<button type="button" class="seg-btn" disabled aria-pressed="{str(i == d["dim_index"]).lower()}">'
        f"{x['dims']} 维</button>"
        for i, x in enumerate(d["encodings"])
    )
    cols = min(FALLBACK_DIMS, e["dims"])
    head = "".join(f'<th scope="col">{j}</th>' for j in range(cols))
    rows = "".join(
        f'<tr><th scope="row">{p}</th>' + "".join(f"<td>{fmt(v, 2)}</td>" for v in row[:cols]) + "</tr>"
        for p, row in enumerate(e["corner"])
    )
    sims = "，".join(f"相距 {k}：{fmt(s, 2)}" for k, s in enumerate(e["similarity"][:6]))
    return (
        f'<div class="widget-controls pe-controls" aria-hidden="true"><div class="seg">{buttons}</div>'
        f'<div class="pe-pos"><span class="widget-label">位置 p</span><input type="range" disabled '
        f'value="{d["position"]}"><output>{d["position"]}</output></div></div>'
        '<div class="pe-heat pe-static"><div class="heat-scroll"><table class="num-table">'
        f"<caption>{e['dims']} 维正弦位置编码"
        f'的左上角（行：位置，列：维度）</caption><thead><tr><th scope="col">位置＼维度</th>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table></div></div>"
        f'<div class="pe-chart pe-static"><p class="widget-caption">两个位置的余弦相似度只取决于它们相距多远：'
        f"{escapeHtml(sims)}。</p></div>"
    )


WIDGET = Widget(
    "positional-encoding",
    "正弦位置编码",
    {
        "positions": Option("integer", 48, "how many positions (rows), 2 … 128", minimum=2, maximum=128),
        "dims": DimsOption("dims", [8, 16, 32, 64, 128], "the dimension counts a reader can choose"),
        "dim": Option("integer", 64, "the dimension count shown first (one of dims)", minimum=2),
        "position": Option("integer", 10, "the position whose similarities are drawn first", minimum=0),
        "base": Option("number", 10000, "the base of the frequencies (10000 in the paper)", minimum=2, maximum=1e7),
    },
    compute,
    fallback,
    check,
    build_data=build_data,
    lazy=True,
    embed=embedded,
)
