"""The activation explainer's widgets without a browser: `activation-plot` and `linear-collapse` data against
attention_core.activations, their facts for ``{data}`…` `` quotes, fallbacks, and bad options as path:line errors."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from attention_core.activations import ACTIVATIONS, designed_two_layer_net
from tests.conftest import ROOT, all_widgets
from tests.plugin_harness import render_snippet

DATA_RE = re.compile(r'<script type="application/json" class="widget-data">(.*?)</script>', re.S)


def embedded(source: str) -> dict:
    html, problems = render_snippet(source)
    assert problems == []
    [data] = [json.loads(m) for m in DATA_RE.findall(html)]
    return data


def test_activation_plot_reference_samples_are_attention_core() -> None:
    data = embedded("```{widget} activation-plot\nfunctions: [tanh, silu]\nx: 1.5\n```\n")
    assert data["shown"] == ["tanh", "silu"]
    assert data["x"] == 150  # the point's position in steps of x_step = 0.01
    assert [f["name"] for f in data["functions"]] == list(ACTIVATIONS)
    for name, rows in data["reference"].items():
        act = ACTIVATIONS[name]
        for x, (fx, gx) in zip(data["reference_xs"], rows):
            # embedded numbers are rounded to 6 significant digits (builder/widgets/fallback.py round_significant)
            assert fx == pytest.approx(float(act.f(x)), abs=1e-6) and gx == pytest.approx(float(act.grad(x)), abs=1e-6)
    # the keyboard moves by 0.1: every reference x must be reachable from any start on that grid
    assert all(abs(x * 10 - round(x * 10)) < 1e-9 for x in data["reference_xs"])
    # only the saturating functions carry a threshold; ReLU alone has a dead side
    assert [f["name"] for f in data["functions"] if f["saturated_from"] is not None] == ["sigmoid", "tanh"]
    assert [f["name"] for f in data["functions"] if f["dead"]] == ["relu"]


def test_activation_plot_facts_by_hand() -> None:
    facts = all_widgets()["activation-plot"].compute({"functions": ["relu"], "x": 0})["quotes"]
    assert facts["sigmoid′最大"] == "0.25"  # σ′(0) = ½ · ½
    assert facts["tanh′最大"] == "1"  # 1 − tanh²(0)
    # σ′(3) = e³/(1 + e³)² = 20.0855/443.86 = 0.04518 → 0.045; its 5th power 1.88e−7
    assert facts["sigmoid′(3)"] == "0.045"
    assert facts["sigmoid′(3)^5"] == "1.9 × 10⁻⁷"
    # |σ′| < 0.05 from x = ln(s/(1 − s)), s = (1 + √0.8)/2 → 2.887 → "2.9"; tanh: atanh(√0.95) = 2.178 → "2.2"
    assert facts["sigmoid饱和"] == "2.9" and facts["tanh饱和"] == "2.2"
    assert facts["silu最小x"] == "−1.28" and facts["silu最小值"] == "−0.28"  # x = −1 − W(1/e) = −1.2785
    assert facts["gelu(-1)"] == "−0.16"  # −Φ(−1) = −0.1587


def test_activation_plot_fallback_shows_the_reference_table() -> None:
    html, problems = render_snippet("```{widget} activation-plot\nfunctions: [relu]\n```\n")
    assert problems == []
    # ReLU at the first reference x (−3): f = 0, f′ = 0; at 3: f = 3, f′ = 1
    assert '<th scope="col">ReLU</th>' in html
    assert '<tr><th scope="row">−3.0</th><td>0.000</td></tr>' in html
    assert '<tr><th scope="row">3.0</th><td>1.000</td></tr>' in html


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "functions: [relu, swishy]\n",
            "content/test.md:2: option 'functions': unknown value 'swishy' (known: sigmoid, tanh, "
            "relu, gelu, gelu_tanh, silu) [widget]",
        ),
        (
            "functions:\n  - relu\n  - gelu\n  - relu\n",
            "content/test.md:5: option 'functions' lists 'relu' twice [widget]",
        ),
        (
            "functions: []\n",
            "content/test.md:2: option 'functions' must be a non-empty list of: sigmoid, tanh, relu, gelu, "
            "gelu_tanh, silu [widget]",
        ),
        ("x: 9\n", "content/test.md:2: option 'x' must be between -4 and 4, got 9 [widget]"),
        ("x: 0.005\n", "content/test.md:2: option 'x' (0.005) must be a multiple of 0.01 [widget]"),
        (
            "colour: red\n",
            "content/test.md:2: unknown option 'colour' for widget 'activation-plot' (allowed: functions, x) [widget]",
        ),
    ],
)
def test_activation_plot_bad_options_name_their_line(body: str, message: str) -> None:
    _, problems = render_snippet(f"```{{widget}} activation-plot\n{body}```\n")
    assert problems == [message]


def test_linear_collapse_data_by_hand() -> None:
    data = embedded("```{widget} linear-collapse\nx: -1.5\nactivation: relu\n```\n")
    net = designed_two_layer_net()
    assert data["x"] == -15 and data["relu"] is True
    # W = W2·W1 = 0.5·1 + 1·(−2) + (−1.5)·1 = −3; b = W2·b1 + b2 = 0.5 + 1 + 3 − 0.5 = 4
    assert (data["w"], data["b"]) == (-3, 4)
    assert data["quotes"]["合并权重"] == "−3" and data["quotes"]["合并偏置"] == "4"
    xs = np.array(data["table_xs"])
    np.testing.assert_allclose(data["linear"], data["collapsed"], atol=1e-9)  # the whole point: the same numbers
    np.testing.assert_allclose(data["with_relu"], net.output(xs, "relu"), atol=1e-6)
    # ReLU at x = 0 by hand: h = (1, 1, −2) → (1, 1, 0) → 0.5 + 1 + 0 − 0.5 = 1, where the line gives 4
    assert data["with_relu"][data["table_xs"].index(0.0)] == 1


def test_linear_collapse_is_written_and_computed_in_rows() -> None:
    """The site's convention (x a row, matrices on the right): h = x·W₁ + b₁, y = h·W₂ + b₂, W = W₁·W₂,
    b = b₁·W₂ + b₂, y = x·W + b. With the shapes of that form — W₁ (1, 3), W₂ (3, 1) — the numbers the widget shows
    give the outputs it shows, and its text writes every formula that way (W₂ as a column, [...]ᵀ)."""
    net = designed_two_layer_net()
    html, problems = render_snippet("```{widget} linear-collapse\nx: 1\n```\n")
    assert problems == []
    data = json.loads(DATA_RE.search(html).group(1))
    w1, b1 = np.array([data["w1"]]), np.array([data["b1"]])  # rows (1, 3)
    w2, b2 = np.array([data["w2"]]).T, data["b2"]  # a column (3, 1)
    assert w1.shape == b1.shape == (1, 3) and w2.shape == (3, 1)
    for x, y in zip(data["table_xs"], data["linear"]):
        xr = np.array([[x]])  # (1, 1)
        assert ((xr @ w1 + b1) @ w2 + b2).shape == (1, 1)
        assert float(((xr @ w1 + b1) @ w2 + b2)[0, 0]) == pytest.approx(y, abs=1e-9)
        assert float(net.output(x)) == pytest.approx(y, abs=1e-9)  # attention_core computes the row form
    assert float((w1 @ w2)[0, 0]) == data["w"] and float((b1 @ w2)[0, 0] + b2) == data["b"]
    text = re.sub(r"<[^>]+>", "", html.split('<script type="application/json"', 1)[0])
    for formula in ("h = x·W₁ + b₁", "y = h·W₂ + b₂", "y = x·W + b", "W = W₁·W₂", "b = b₁·W₂ + b₂"):
        assert formula in text, formula
    assert "W₂ = [0.5, 1, −1.5]ᵀ" in text and "W₁ = [1, −2, 1]" in text
    js = (ROOT / "attention_course" / "widgets" / "linear_collapse" / "widget.js").read_text(encoding="utf-8")
    for formula in ("h = x·W₁ + b₁", "·W₂ + b₂ = ", "y = x·W + b", "W = W₁·W₂", "b = b₁·W₂ + b₂", "]ᵀ"):
        assert formula in js, formula
    assert not re.search(r"W[₁₂]·(?:x|h|b₁|max)|W·x|W₂·W₁", text + js)  # no matrix on the left


def test_linear_collapse_bad_option() -> None:
    _, problems = render_snippet("```{widget} linear-collapse\nx: 1\nactivation: tanh\n```\n")
    assert problems == ["content/test.md:3: option 'activation' must be one of none, relu; got 'tanh' [widget]"]


def test_quotes_come_from_the_widget_data_and_unknown_ones_fail_on_their_line() -> None:
    html, problems = render_snippet(
        "```{widget} activation-plot\n```\n\n"
        "最大斜率是 {data}`activation-plot sigmoid′最大`。\n\n"
        "未知：{data}`activation-plot 不存在`。\n"
    )
    assert '<span class="widget-quote">0.25</span>' in html
    assert len(problems) == 1 and problems[0].startswith(
        "content/test.md:6: {data}`activation-plot 不存在`: no number called '不存在' (e.g. sigmoid′最大"
    )


def test_designed_net_kinks_are_where_the_note_says() -> None:
    # The note says the hidden units cross 0 at x = −1, 0.5 and 2: −b1/W1 for each unit.
    net = designed_two_layer_net()
    assert sorted((-net.b1 / net.w1).tolist()) == [-1.0, 0.5, 2.0]
    assert "x = −1、0.5、2" in all_widgets()["linear-collapse"].compute({"x": 0, "activation": "none"})["note"]
    assert math.isclose(net.output(2.0, "relu"), net.output(2.0), abs_tol=1e-12) is False
