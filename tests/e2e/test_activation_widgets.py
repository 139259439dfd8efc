"""The activation explainer's widgets in Chromium: overlay toggles, the point moved by keyboard
and by pointer, its readout compared with the NumPy reference samples the build embedded (and the widget's own
formulas with attention_core at many points), the two-layer demo and the real model's gates."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attention_core.activations import ACTIVATIONS, designed_two_layer_net

pytestmark = pytest.mark.e2e

PAGE = "activation-function-explained.html"


def fixed(x: float, decimals: int) -> str:
    """The widgets' num(): fixed decimals, a real minus sign, no "−0.0000"."""
    text = f"{x:.{decimals}f}"
    return text[1:] if float(text) == 0 and text.startswith("-") else text.replace("-", "−")


def open_widget(page, name: str):
    page.goto(page.base + PAGE)
    # widget scripts load as their widget nears the viewport (theme/js/site/lazy-widgets.js)
    page.locator(f'.widget[data-widget="{name}"]').first.scroll_into_view_if_needed()
    root = page.locator(f'.widget[data-widget="{name}"][data-ready="true"]')
    root.wait_for()
    root.scroll_into_view_if_needed()
    data = json.loads(root.locator("script.widget-data").text_content())
    return root.locator(".widget-body"), data


def readout(body) -> dict[str, tuple[str, str, str]]:
    rows = {}
    for row in body.locator(".act-readout tbody tr[data-name]").all():
        rows[row.get_attribute("data-name")] = (
            row.locator(".act-f").inner_text(),
            row.locator(".act-g").inner_text(),
            row.locator(".act-state").inner_text(),
        )
    return rows


def test_activation_plot_overlay_toggle_and_keyboard_readout_match_numpy(page):
    body, data = open_widget(page, "activation-plot")
    plot = body.get_by_role("slider")
    assert data["shown"] == ["sigmoid", "relu", "gelu"]  # what the page asks for
    assert set(readout(body)) == {"sigmoid", "relu", "gelu"}
    assert body.locator(".act-panel-f path.act-line").count() == 3

    # Overlay: switch Tanh and both GELU forms on, Sigmoid off; the readout and the curves follow.
    for label in ("Tanh", "GELU（tanh 近似）", "SiLU / Swish"):
        button = body.get_by_role("button", name=label, exact=True)
        button.click()
        assert button.get_attribute("aria-pressed") == "true"
    body.get_by_role("button", name="Sigmoid", exact=True).click()
    assert set(readout(body)) == {"tanh", "relu", "gelu", "gelu_tanh", "silu"}
    assert body.locator(".act-panel-f path.act-line").count() == 5
    assert body.locator(".act-panel-g path.act-line").count() == 5

    # Keyboard: Home goes to −4, then 0.1 per arrow press to every reference x; the readout is the build's NumPy
    # sample (embedded by attention_course/widgets/activation_plot/widget.py) to 4 decimals, and attention_core agrees.
    plot.focus()
    plot.press("Home")
    assert plot.get_attribute("aria-valuenow") == "-4"
    position = -40  # in tenths
    for i, x in enumerate(data["reference_xs"]):
        target = round(x * 10)
        for _ in range(target - position):
            plot.press("ArrowRight")
        position = target
        assert plot.get_attribute("aria-valuetext") == f"x = {fixed(x, 2)}"
        shown = readout(body)
        for name, (fx, gx, state) in shown.items():
            ref_f, ref_g = data["reference"][name][i]
            assert (fx, gx) == (fixed(ref_f, 4), fixed(ref_g, 4)), (name, x)
            act = ACTIVATIONS[name]
            assert (fx, gx) == (fixed(float(act.f(x)), 4), fixed(float(act.grad(x)), 4)), (name, x)
            if name == "relu":
                assert state == ("死区" if x <= 0 else "正常")
            if name == "tanh":
                assert state == ("饱和" if abs(float(act.grad(x))) < data["saturated_slope"] else "正常"), x
    # Shift+arrow is the fine step, PageDown a whole unit, End the far end.
    plot.press("Shift+ArrowLeft")
    assert plot.get_attribute("aria-valuetext") == f"x = {fixed(data['reference_xs'][-1] - 0.01, 2)}"
    plot.press("PageDown")
    assert plot.get_attribute("aria-valuetext") == f"x = {fixed(data['reference_xs'][-1] - 1.01, 2)}"
    plot.press("End")
    assert plot.get_attribute("aria-valuenow") == "4"


def test_activation_plot_formulas_in_the_browser_are_attention_core_s(page):
    open_widget(page, "activation-plot")
    xs = np.round(np.linspace(-8, 8, 1601), 10)
    got = page.evaluate(
        """(xs) => { const m = window.Course.widgets['activation-plot'];
      return Object.fromEntries(['sigmoid', 'tanh', 'relu', 'gelu', 'gelu_tanh', 'silu']
        .map((n) => [n, xs.map((x) => m.evaluate(n, x))])); }""",
        xs.tolist(),
    )
    for name, act in ACTIVATIONS.items():
        values = np.array(got[name])
        np.testing.assert_allclose(values[:, 0], act.f(xs), rtol=0, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(values[:, 1], act.grad(xs), rtol=0, atol=1e-12, err_msg=name)


def test_activation_plot_pointer_drag_moves_the_point(page):
    body, data = open_widget(page, "activation-plot")
    plot = body.get_by_role("slider")
    box = body.locator("svg.act-svg").bounding_box()
    width = float(body.locator("svg.act-svg").get_attribute("width"))
    left, right = 34, 10  # the plot's margins in activation-plot.js (viewBox units = CSS px)

    def client_x(x: float) -> float:
        return box["x"] + (left + (x + 4) / 8 * (width - left - right)) * box["width"] / width

    y = box["y"] + box["height"] / 2
    page.mouse.move(client_x(-3), y)
    page.mouse.down()
    page.mouse.move(client_x(0.5), y, steps=5)
    shown = float(plot.get_attribute("aria-valuenow"))
    assert abs(shown - 0.5) <= 0.02  # one pixel is about 0.01
    page.mouse.move(client_x(2.5), y, steps=5)
    page.mouse.up()
    x = float(plot.get_attribute("aria-valuenow"))
    assert abs(x - 2.5) <= 0.02
    fx, gx, _ = readout(body)["gelu"]
    assert fx == fixed(float(ACTIVATIONS["gelu"].f(x)), 4) and gx == fixed(float(ACTIVATIONS["gelu"].grad(x)), 4)
    page.mouse.move(client_x(-1), y)  # not pressed any more: hovering moves nothing
    assert float(plot.get_attribute("aria-valuenow")) == x


def test_linear_collapse_same_numbers_until_relu(page):
    body, data = open_widget(page, "linear-collapse")
    net = designed_two_layer_net()
    w, b = net.collapsed()
    slider = body.get_by_role("slider", name="输入 x")
    toggle = body.get_by_role("button", name="在两层之间加 ReLU")
    assert toggle.get_attribute("aria-pressed") == "false"
    slider.focus()
    slider.press("Home")  # x = −3
    for k in range(0, 61, 15):  # x = −3, −1.5, 0, 1.5, 3
        x = -3 + k / 10
        assert body.locator(".lc-y").inner_text() == body.locator(".lc-merged-y").inner_text()
        assert float(body.locator(".lc-merged-y").inner_text().replace("−", "-")) == pytest.approx(w * x + b, abs=1e-3)
        for _ in range(15):
            slider.press("ArrowRight")
    slider.press("Home")
    for _ in range(30):
        slider.press("ArrowRight")  # x = 0
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    # By hand at x = 0: h = (1, 1, −2) → ReLU (1, 1, 0) → 0.5 + 1 − 0.5 = 1, while the merged line says 4.
    assert body.locator(".lc-y").inner_text() == "1" == fixed(float(net.output(0.0, "relu")), 0)
    assert body.locator(".lc-merged-y").inner_text() == "4"
    assert "不相等" in body.locator(".lc-verdict").inner_text()
    assert body.locator("path.lc-relu").get_attribute("d")


def test_ffn_gate_layer_slider_shows_each_layer_s_real_share(page):
    body, data = open_widget(page, "ffn-gate")
    slider = body.get_by_role("slider", name="层 L")
    assert data["d_ffn"] == 1536 and data["d_model"] == 576
    slider.focus()
    slider.press("Home")
    for layer in range(data["n_layers"]):
        assert body.locator(".fg-negative").inner_text() == f"{math.floor(data['negative'][layer] * 100 + 0.5)}%"
        assert f"第 {layer} 层" in body.locator(".fg-summary").inner_text()
        assert body.locator("rect.fg-strip-bar.is-current").count() == 1
        slider.press("ArrowRight")
    assert body.locator("rect.fg-bar").count() == data["bins"][2]
