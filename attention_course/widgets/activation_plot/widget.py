"""The `activation-plot` widget: activation functions overlaid, f(x) above and f′(x) below, with a point the
reader drags along x (pointer or keyboard) for the exact values; saturation regions and ReLU's dead side shaded
(widget.js).

The browser computes the curves itself from the same closed forms as attention_core.activations; the data
carries reference samples computed here, which the fallback table shows and the end-to-end test compares with
the widget's readout, plus the facts the prose quotes (``{data}`activation-plot sigmoid′最大` ``).
"""

from __future__ import annotations

from markdown_it.common.utils import escapeHtml

from attention_core.activations import ACTIVATIONS, SATURATED_SLOPE, gelu, gelu_tanh, saturated_from, silu_minimum
from builder.widgets.fallback import fmt, note_html
from builder.widgets.quote import quote_named
from builder.widgets.schema import Option, Widget, num_text

X_LIMIT = 4  # the plot spans −4 … 4
X_STEP = 0.01  # the point moves on this grid (pointer), 0.1 per arrow key
REFERENCE_XS = (-3.0, -2.0, -1.3, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0)  # on the keyboard's 0.1 grid
READOUT_DECIMALS = 4


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def scientific(x: float, digits: int = 1) -> str:
    """1.88e-07 → "1.9 × 10⁻⁷": how the prose writes a very small number."""
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    return f"{mantissa.replace('-', '−')} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"


def activation_plot_check(o: dict) -> list[tuple[str, str]]:
    ticks = o["x"] / X_STEP
    if abs(ticks - round(ticks)) > 1e-9:
        return [("x", f"option 'x' ({num_text(o['x'])}) must be a multiple of {X_STEP}")]
    return []


def _facts() -> dict[str, str]:
    import numpy as np

    xs = np.linspace(-X_LIMIT, X_LIMIT, 8001)
    gap = np.abs(gelu_tanh(xs) - gelu(xs))
    x_min, y_min = silu_minimum()
    return {
        "sigmoid′最大": fmt(float(ACTIVATIONS["sigmoid"].grad(0.0)), 2),
        "tanh′最大": fmt(float(ACTIVATIONS["tanh"].grad(0.0)), 0),
        "饱和阈值": fmt(SATURATED_SLOPE, 2),
        "sigmoid饱和": fmt(saturated_from("sigmoid"), 1),
        "tanh饱和": fmt(saturated_from("tanh"), 1),
        "sigmoid′(3)": fmt(float(ACTIVATIONS["sigmoid"].grad(3.0)), 3),
        "sigmoid′(3)^5": scientific(float(ACTIVATIONS["sigmoid"].grad(3.0)) ** 5),
        "silu最小x": fmt(x_min, 2),
        "silu最小值": fmt(y_min, 2),
        "gelu近似误差": fmt(float(gap.max()), 4),
        "gelu(-1)": fmt(float(gelu(-1.0)), 2),
        "relu(-1)": fmt(float(ACTIVATIONS["relu"].f(-1.0)), 0),
    }


def activation_plot_compute(o: dict) -> dict:
    functions = []
    for a in ACTIVATIONS.values():
        functions.append(
            {
                "name": a.name,
                "label": a.label,
                "formula": a.formula,
                "dead": a.dead,
                "saturated_from": saturated_from(a.name) if a.saturates else None,
            }
        )
    reference = {a.name: [[float(a.f(x)), float(a.grad(x))] for x in REFERENCE_XS] for a in ACTIVATIONS.values()}
    return {
        "functions": functions,
        "shown": list(o["functions"]),
        "x": round(o["x"] / X_STEP),
        "x_limit": X_LIMIT,
        "x_step": X_STEP,
        "saturated_slope": SATURATED_SLOPE,
        "decimals": READOUT_DECIMALS,
        "reference_xs": list(REFERENCE_XS),
        "reference": reference,
        "quotes": _facts(),
    }


def activation_plot_fallback(d: dict) -> str:
    names = [f["name"] for f in d["functions"] if f["name"] in d["shown"]]
    labels = {f["name"]: f["label"] for f in d["functions"]}
    head = "".join(f'<th scope="col">{escapeHtml(labels[n])}</th>' for n in names)

    def table(k: int, caption: str) -> str:
        rows = "".join(
            f'<tr><th scope="row">{fmt(x, 1)}</th>'
            + "".join(f"<td>{fmt(d['reference'][n][i][k], 3)}</td>" for n in names)
            + "</tr>"
            for i, x in enumerate(d["reference_xs"])
        )
        return (
            f'<div class="heat-scroll"><table class="num-table"><caption>{caption}</caption>'
            f'<thead><tr><th scope="col">x</th>{head}</tr></thead><tbody>{rows}</tbody></table></div>'
        )

    return (
        table(0, "函数值 f(x)")
        + table(1, "导数 f′(x)（梯度）")
        + note_html(
            f"导数小于 {fmt(d['saturated_slope'], 2)} 的区间称为饱和区；ReLU 在 x < 0 一侧导数恒为 0。"
            "开启 JavaScript 后可以叠加曲线、拖动取值点。"
        )
    )


WIDGET = Widget(
    "activation-plot",
    "激活函数与它的导数",
    {
        "functions": Option(
            "choices", ["sigmoid", "relu", "gelu"], "activations drawn at first", choices=tuple(ACTIVATIONS)
        ),
        "x": Option("number", -2, "initial position of the point", minimum=-X_LIMIT, maximum=X_LIMIT),
    },
    activation_plot_compute,
    activation_plot_fallback,
    activation_plot_check,
    quote=quote_named,
)
