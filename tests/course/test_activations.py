"""attention_core.activations against values worked out by hand, and every derivative against a central finite
difference of its own function."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.activations import (
    ACTIVATIONS,
    designed_two_layer_net,
    gelu,
    gelu_grad,
    gelu_tanh,
    relu,
    relu_grad,
    saturated_from,
    sigmoid,
    sigmoid_grad,
    silu,
    silu_grad,
    silu_minimum,
    swiglu,
    tanh_grad,
)


def test_sigmoid_by_hand() -> None:
    # σ(0) = 1/(1 + e⁰) = 1/2; σ′(0) = σ(1 − σ) = 1/2 · 1/2 = 1/4 — the largest slope sigmoid ever has.
    assert sigmoid(0.0) == 0.5
    assert sigmoid_grad(0.0) == 0.25
    # σ(ln 3) = 1/(1 + 1/3) = 3/4, σ′(ln 3) = 3/4 · 1/4 = 3/16.
    assert sigmoid(math.log(3)) == pytest.approx(0.75, abs=1e-15)
    assert sigmoid_grad(math.log(3)) == pytest.approx(3 / 16, abs=1e-15)
    # Symmetry σ(−x) = 1 − σ(x), and no overflow far out: σ(−1000) = e^(−1000)/(1 + e^(−1000)) underflows to 0.
    assert sigmoid(-math.log(3)) == pytest.approx(0.25, abs=1e-15)
    assert sigmoid(-1000.0) == 0.0 and sigmoid(1000.0) == 1.0


def test_tanh_slope_by_hand() -> None:
    # tanh′(0) = 1 − 0² = 1; tanh(ln 2) = (2 − 1/2)/(2 + 1/2) = 3/5, so tanh′(ln 2) = 1 − 9/25 = 16/25.
    assert tanh_grad(0.0) == 1.0
    assert tanh_grad(math.log(2)) == pytest.approx(16 / 25, abs=1e-15)


def test_relu_and_its_dead_side() -> None:
    # max(0, x) keeps positives, zeroes negatives; its slope is 1 on the right, 0 on the left and (by convention) at 0.
    np.testing.assert_array_equal(relu([-2.0, 0.0, 3.5]), [0.0, 0.0, 3.5])
    np.testing.assert_array_equal(relu_grad([-2.0, 0.0, 3.5]), [0.0, 0.0, 1.0])


def test_gelu_exact_form_by_hand() -> None:
    # Φ(0) = ½ → GELU(0) = 0, GELU′(0) = Φ(0) + 0·φ(0) = ½.
    assert gelu(0.0) == 0.0 and gelu_grad(0.0) == 0.5
    # Φ(1) = ½(1 + erf(1/√2)) = 0.8413447460685429 (the standard normal table's 0.8413); GELU(1) = 1·Φ(1).
    assert gelu(1.0) == pytest.approx(0.8413447460685429, abs=1e-15)
    # GELU(−1) = −Φ(−1) = −(1 − 0.8413447460685429) = −0.15865525393145707.
    assert gelu(-1.0) == pytest.approx(-0.15865525393145707, abs=1e-15)
    # GELU′(1) = Φ(1) + φ(1) = 0.8413447460685429 + e^(−½)/√(2π) = 0.8413447460685429 + 0.24197072451914337.
    assert gelu_grad(1.0) == pytest.approx(0.8413447460685429 + 0.24197072451914337, abs=1e-15)


def test_gelu_tanh_approximation_is_close_but_not_equal() -> None:
    # At x = 1: u = √(2/π)(1 + 0.044715) = 0.7978845608 · 1.044715 = 0.833560…, tanh(u) = 0.682…,
    # ½ · (1 + tanh u) = 0.8411919906082768 — 2.5e-4 below the exact 0.8413447.
    assert gelu_tanh(1.0) == pytest.approx(0.8411919906082768, abs=1e-12)
    xs = np.linspace(-6, 6, 2401)
    gap = np.abs(gelu_tanh(xs) - gelu(xs))
    assert 1e-4 < gap.max() < 5e-4  # a real approximation: never exactly the exact form, never far from it


def test_silu_by_hand() -> None:
    # SiLU(x) = x·σ(x): SiLU(0) = 0, SiLU′(0) = σ(0)(1 + 0) = ½; SiLU(ln 3) = ln 3 · ¾.
    assert silu(0.0) == 0.0 and silu_grad(0.0) == 0.5
    assert silu(math.log(3)) == pytest.approx(0.75 * math.log(3), abs=1e-15)
    # SiLU′(ln 3) = σ(1 + x(1 − σ)) = ¾ (1 + ln 3 · ¼).
    assert silu_grad(math.log(3)) == pytest.approx(0.75 * (1 + math.log(3) / 4), abs=1e-15)


def test_silu_minimum_solves_its_own_equation() -> None:
    # SiLU′(x) = 0 ⇔ 1 + x(1 − σ(x)) = 0 ⇔ 1 + x/(1 + eˣ) = 0 ⇔ eˣ = −x − 1; its root is x ≈ −1.2785
    # (the Lambert-W form x = −1 − W(e⁻¹), W(e⁻¹) = 0.27846454…), where SiLU ≈ −0.2785.
    x, y = silu_minimum()
    assert x == pytest.approx(-1 - 0.2784645427610738, abs=1e-12)
    assert math.exp(x) == pytest.approx(-x - 1, abs=1e-12)
    assert y == pytest.approx(x * (1 / (1 + math.exp(-x))), abs=1e-15)
    assert y == pytest.approx(-0.2784645427610738, abs=1e-12)  # at the minimum, SiLU(x) = x + 1 = −W(e⁻¹)


def test_sigmoid_saturation_point_by_hand() -> None:
    # σ(1 − σ) = 0.05 ⇔ σ = (1 + √(1 − 0.2))/2 = (1 + √0.8)/2 ⇒ x = ln(σ/(1 − σ)).
    s = (1 + math.sqrt(0.8)) / 2
    assert saturated_from("sigmoid") == pytest.approx(math.log(s / (1 - s)), abs=1e-12)
    # 1 − tanh² = 0.05 ⇔ tanh x = √0.95 ⇒ x = atanh(√0.95).
    assert saturated_from("tanh") == pytest.approx(math.atanh(math.sqrt(0.95)), abs=1e-12)
    with pytest.raises(ValueError):
        saturated_from("relu")


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_every_derivative_matches_a_finite_difference(name: str) -> None:
    act = ACTIVATIONS[name]
    xs = np.linspace(-6, 6, 241)
    xs = xs[np.abs(xs) > 1e-3] if name == "relu" else xs  # ReLU has a kink at 0: no derivative there
    h = 1e-5
    central = (act.f(xs + h) - act.f(xs - h)) / (2 * h)  # error O(h²) ≈ 1e-10 times f‴
    np.testing.assert_allclose(act.grad(xs), central, atol=1e-8, rtol=0)


def test_two_linear_layers_are_one_linear_layer_but_not_with_relu() -> None:
    net = designed_two_layer_net()
    # By hand: W2·W1 = 0.5·1 + 1·(−2) + (−1.5)·1 = −3; W2·b1 + b2 = 0.5 + 1 + 3 − 0.5 = 4.
    assert net.collapsed() == (-3.0, 4.0)
    xs = np.linspace(-3, 3, 61)
    w, b = net.collapsed()
    np.testing.assert_allclose(net.output(xs), w * xs + b, atol=1e-12)
    # With ReLU: at x = 0 the hidden pre-activations are (1, 1, −2) → ReLU (1, 1, 0) → 0.5 + 1 − 0.5 = 1, not 4.
    assert net.output(0.0, "relu") == pytest.approx(1.0, abs=1e-15)
    assert np.abs(net.output(xs, "relu") - (w * xs + b)).max() > 1


def test_swiglu_by_hand() -> None:
    # d = 1, d_ffn = 2: gate = (x·1, x·(−1)), up = (x·2, x·3); with x = ln 3:
    # silu(ln 3) = ¾ ln 3, silu(−ln 3) = −ln 3 · ¼; ⊙ up = (¾·2, −¼·3)·(ln 3)²; down (1, 1) → (1.5 − 0.75)(ln 3)².
    x = np.array([[math.log(3)]])
    out = swiglu(x, [[1.0, -1.0]], [[2.0, 3.0]], [[1.0], [1.0]])
    assert out.shape == (1, 1)
    assert out[0, 0] == pytest.approx(0.75 * math.log(3) ** 2, abs=1e-14)
