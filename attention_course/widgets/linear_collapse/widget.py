"""The `linear-collapse` widget: a designed 1 → 3 → 1 network (attention_core.activations.designed_two_layer_net)
computed two ways — layer by layer, h = x·W₁ + b₁ and y = h·W₂ + b₂, and as the single linear layer y = x·W + b
with W = W₁·W₂, b = b₁·W₂ + b₂ the two collapse into — with a toggle that puts ReLU between the layers, after which
the single-layer shortcut no longer holds. The site's row convention: x is a (1, 1) row, W₁ a (1, 3) row, b₁ a
(1, 3) row, W₂ a (3, 1) column (shown as [w₁, w₂, w₃]ᵀ), b₂ a number (widget.js)."""

from __future__ import annotations

import numpy as np
from markdown_it.common.utils import escapeHtml

from attention_core.activations import designed_two_layer_net
from builder.widgets.fallback import as_list, fmt, note_html
from builder.widgets.quote import quote_named
from builder.widgets.schema import Option, Widget, num_text

X_LIMIT = 3
X_STEP = 0.1
TABLE_XS = (-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0)
NOTE = (
    "这是为讲解设计的小网络（不是训练出来的模型）：1 个输入、3 个隐藏单元、1 个输出。"
    "三个隐藏单元在 x = −1、0.5、2 处跨过 0，所以加上 ReLU 后折线会在这三处拐弯。"
)


def _short(x: float) -> str:
    text = fmt(x, 3).rstrip("0").rstrip(".")
    return "0" if text in ("−0", "") else text


def linear_collapse_check(o: dict) -> list[tuple[str, str]]:
    ticks = o["x"] / X_STEP
    if abs(ticks - round(ticks)) > 1e-9:
        return [("x", f"option 'x' ({num_text(o['x'])}) must be a multiple of {X_STEP}")]
    return []


def linear_collapse_compute(o: dict) -> dict:
    net = designed_two_layer_net()
    w, b = net.collapsed()
    xs = np.array(TABLE_XS)
    w1, b1, w2 = (", ".join(_short(v) for v in a) for a in (net.w1, net.b1, net.w2))
    return {
        "w1": as_list(net.w1),
        "b1": as_list(net.b1),
        "w2": as_list(net.w2),
        "b2": net.b2,
        "w": w,
        "b": b,
        "x": round(o["x"] / X_STEP),
        "x_step": X_STEP,
        "x_limit": X_LIMIT,
        "relu": o["activation"] == "relu",
        "table_xs": list(TABLE_XS),
        "linear": as_list(net.output(xs)),
        "collapsed": as_list(w * xs + b),
        "with_relu": as_list(net.output(xs, "relu")),
        "note": NOTE,
        "quotes": {
            "合并权重": _short(w),
            "合并偏置": _short(b),
            "W1": w1,
            "b1": b1,
            "W2": w2,
            "b2": _short(net.b2),
            "隐藏单元数": str(len(net.w1)),
        },
    }


def linear_collapse_fallback(d: dict) -> str:
    rows = "".join(
        f'<tr><th scope="row">{_short(x)}</th><td>{_short(a)}</td><td>{_short(c)}</td><td>{_short(r)}</td></tr>'
        for x, a, c, r in zip(d["table_xs"], d["linear"], d["collapsed"], d["with_relu"])
    )
    facts = {k: escapeHtml(v) for k, v in d["quotes"].items()}
    return (
        f'<p class="widget-caption">第一层 h = x·W₁ + b₁，W₁ = [{facts["W1"]}]，b₁ = [{facts["b1"]}]；'
        f"第二层 y = h·W₂ + b₂，W₂ = [{facts['W2']}]ᵀ，b₂ = {facts['b2']}。"
        f"合并成一层 y = x·W + b：W = W₁·W₂ = {facts['合并权重']}，b = b₁·W₂ + b₂ = {facts['合并偏置']}。</p>"
        '<div class="heat-scroll"><table class="num-table"><caption>同一个输入，三种算法的输出 y</caption>'
        '<thead><tr><th scope="col">x</th><th scope="col">两层线性，逐层算</th><th scope="col">合并成一层</th>'
        '<th scope="col">中间加 ReLU</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>" + note_html(d["note"])
    )


WIDGET = Widget(
    "linear-collapse",
    "两层线性 = 一层线性？",
    {
        "x": Option("number", 1, "initial input x", minimum=-X_LIMIT, maximum=X_LIMIT),
        "activation": Option("choice", "none", "between the layers at first: none | relu", choices=("none", "relu")),
    },
    linear_collapse_compute,
    linear_collapse_fallback,
    linear_collapse_check,
    quote=quote_named,
    styles=("activation-plot",),
)
