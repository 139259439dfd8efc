"""Activation functions and their derivatives, in NumPy (float64) — the numbers of the activation explainer.

Each function takes an array (or a scalar) and returns an array of the same shape. The derivatives are the
closed forms, not finite differences (tests/course/test_activations.py checks them against finite differences).
attention_course/widgets/activation_plot/widget.js computes the same formulas in the browser; the build embeds reference
samples from this module so the end-to-end test can compare the two.

    sigmoid(x)  = 1 / (1 + e^(−x))                      σ′ = σ(1 − σ)
    tanh(x)                                              tanh′ = 1 − tanh²
    relu(x)     = max(0, x)                              relu′ = 1 for x > 0, else 0 (0 at x = 0 by convention)
    gelu(x)     = x · Φ(x),  Φ(x) = ½(1 + erf(x/√2))     exact form (Hendrycks & Gimpel 2016)
    gelu_tanh(x)= ½x(1 + tanh(√(2/π)(x + 0.044715x³)))   the paper's tanh approximation (GPT-2 uses it)
    silu(x)     = x · σ(x)                               a.k.a. Swish with β = 1 (Ramachandran et al. 2017)

SwiGLU (Shazeer 2020), the feed-forward block of Llama-style models: down(silu(gate(x)) ⊙ up(x)).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

F64 = NDArray[np.float64]

GELU_TANH_COEFF = 0.044715  # the cubic coefficient of GELU's tanh approximation (Hendrycks & Gimpel 2016)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_erf = np.frompyfunc(math.erf, 1, 1)  # NumPy has no erf; math.erf is exact to double precision


def _arr(x: ArrayLike) -> F64:
    return np.asarray(x, dtype=np.float64)


def sigmoid(x: ArrayLike) -> F64:
    """1 / (1 + e^(−x)), computed without overflow for large |x| (e^(−x) is never taken of a large positive)."""
    x = _arr(x)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def sigmoid_grad(x: ArrayLike) -> F64:
    s = sigmoid(x)
    return s * (1.0 - s)


def tanh(x: ArrayLike) -> F64:
    return np.tanh(_arr(x))


def tanh_grad(x: ArrayLike) -> F64:
    t = np.tanh(_arr(x))
    return 1.0 - t * t


def relu(x: ArrayLike) -> F64:
    return np.maximum(_arr(x), 0.0)


def relu_grad(x: ArrayLike) -> F64:
    """1 where x > 0, else 0: the kink at 0 gets 0, as PyTorch and JAX do."""
    return (_arr(x) > 0).astype(np.float64)


def normal_cdf(x: ArrayLike) -> F64:
    """Φ(x) = ½(1 + erf(x/√2)): the probability that a standard normal variable is below x."""
    x = _arr(x)
    return 0.5 * (1.0 + np.asarray(_erf(x / math.sqrt(2.0)), dtype=np.float64))


def normal_pdf(x: ArrayLike) -> F64:
    x = _arr(x)
    return np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def gelu(x: ArrayLike) -> F64:
    """The exact GELU, x·Φ(x): the input, kept with the probability that a standard normal stays below it."""
    x = _arr(x)
    return x * normal_cdf(x)


def gelu_grad(x: ArrayLike) -> F64:
    """d/dx x·Φ(x) = Φ(x) + x·φ(x)."""
    x = _arr(x)
    return normal_cdf(x) + x * normal_pdf(x)


def gelu_tanh(x: ArrayLike) -> F64:
    """GELU's tanh approximation ½x(1 + tanh(√(2/π)(x + 0.044715x³))); within 5e-4 of the exact form."""
    x = _arr(x)
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + GELU_TANH_COEFF * x**3)))


def gelu_tanh_grad(x: ArrayLike) -> F64:
    x = _arr(x)
    u = SQRT_2_OVER_PI * (x + GELU_TANH_COEFF * x**3)
    t = np.tanh(u)
    du = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_TANH_COEFF * x * x)
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du


def silu(x: ArrayLike) -> F64:
    """SiLU = Swish with β = 1: x·σ(x)."""
    x = _arr(x)
    return x * sigmoid(x)


def silu_grad(x: ArrayLike) -> F64:
    """d/dx x·σ(x) = σ(x)(1 + x(1 − σ(x)))."""
    x = _arr(x)
    s = sigmoid(x)
    return s * (1.0 + x * (1.0 - s))


def swiglu(x: ArrayLike, w_gate: ArrayLike, w_up: ArrayLike, w_down: ArrayLike) -> F64:
    """The gated feed-forward block of Llama-style models: (silu(x W_gate) ⊙ (x W_up)) W_down.

    x: (T, d); w_gate, w_up: (d, d_ffn); w_down: (d_ffn, d). (attention_core.models.llama.swiglu_mlp is the
    same in float32 with the GGUF's (out, in) weight layout.)"""
    x = _arr(x)
    return (silu(x @ _arr(w_gate)) * (x @ _arr(w_up))) @ _arr(w_down)


@dataclass(frozen=True)
class Activation:
    """One activation for the explainer's plot: its name, how the page labels it, f and f′, and the regions the
    plot shades (`saturates`: |f′| < SATURATED_SLOPE far from 0; `dead`: f′ is exactly 0 for x < 0)."""

    name: str
    label: str
    f: Callable[[ArrayLike], F64]
    grad: Callable[[ArrayLike], F64]
    formula: str
    saturates: bool = False
    dead: bool = False


SATURATED_SLOPE = 0.05  # |f′| below this counts as "saturated": the gradient has all but vanished

ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation("sigmoid", "Sigmoid", sigmoid, sigmoid_grad, "1 / (1 + e^(−x))", saturates=True),
        Activation("tanh", "Tanh", tanh, tanh_grad, "tanh(x)", saturates=True),
        Activation("relu", "ReLU", relu, relu_grad, "max(0, x)", dead=True),
        Activation("gelu", "GELU（精确）", gelu, gelu_grad, "x · Φ(x)"),
        Activation("gelu_tanh", "GELU（tanh 近似）", gelu_tanh, gelu_tanh_grad, "½x(1 + tanh(√(2/π)(x + 0.044715x³)))"),
        Activation("silu", "SiLU / Swish", silu, silu_grad, "x · σ(x)"),
    )
}


def saturated_from(activation: str, *, slope: float = SATURATED_SLOPE, limit: float = 20.0) -> float:
    """The x ≥ 0 beyond which |f′(x)| < `slope` (for the saturating functions, which are symmetric about 0 in
    their slope): found by bisection on the closed-form derivative, which falls monotonically for x ≥ 0."""
    grad = ACTIVATIONS[activation].grad
    lo, hi = 0.0, limit
    if float(grad(lo)) < slope or float(grad(hi)) >= slope:
        raise ValueError(f"{activation}: the slope does not cross {slope} on [0, {limit}]")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(grad(mid)) >= slope else (lo, mid)
    return 0.5 * (lo + hi)


def silu_minimum() -> tuple[float, float]:
    """(x, silu(x)) at SiLU's minimum: where σ(x)(1 + x(1 − σ(x))) = 0, by bisection on [−5, 0]."""
    lo, hi = -5.0, 0.0  # silu′(−5) < 0 < silu′(0) = ½
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(silu_grad(mid)) < 0 else (lo, mid)
    x = 0.5 * (lo + hi)
    return x, float(silu(x))


# ----------------------------------------------------------------- stacked linear layers collapse into one


@dataclass(frozen=True)
class TwoLayerNet:
    """A 1 → hidden → 1 network in the site's row form, y = act(x·W1 + b1)·W2 + b2: W1 and b1 are rows (1, hidden),
    W2 a column (hidden, 1), each stored flat as (hidden,)."""

    w1: F64  # (hidden,)
    b1: F64  # (hidden,)
    w2: F64  # (hidden,)
    b2: float

    def hidden(self, x: ArrayLike) -> F64:
        """Pre-activations, (…, hidden)."""
        return np.multiply.outer(_arr(x), self.w1) + self.b1

    def output(self, x: ArrayLike, activation: str | None = None) -> F64:
        h = self.hidden(x)
        if activation is not None:
            h = ACTIVATIONS[activation].f(h)
        return h @ self.w2 + self.b2

    def collapsed(self) -> tuple[float, float]:
        """The one linear layer the two become without an activation: y = x·(W1·W2) + (b1·W2 + b2)."""
        return float(self.w2 @ self.w1), float(self.w2 @ self.b1 + self.b2)


def designed_two_layer_net() -> TwoLayerNet:
    """A designed example (not a trained model): three hidden units whose ReLU kinks sit at x = −1, 0.5 and 2,
    so the ReLU version bends visibly inside the plot's range [−3, 3] while the linear one stays straight."""
    return TwoLayerNet(
        w1=np.array([1.0, -2.0, 1.0]), b1=np.array([1.0, 1.0, -2.0]), w2=np.array([0.5, 1.0, -1.5]), b2=-0.5
    )


__all__ = [
    "ACTIVATIONS",
    "Activation",
    "GELU_TANH_COEFF",
    "SATURATED_SLOPE",
    "TwoLayerNet",
    "designed_two_layer_net",
    "gelu",
    "gelu_grad",
    "gelu_tanh",
    "gelu_tanh_grad",
    "normal_cdf",
    "normal_pdf",
    "relu",
    "relu_grad",
    "saturated_from",
    "sigmoid",
    "sigmoid_grad",
    "silu",
    "silu_grad",
    "silu_minimum",
    "swiglu",
    "tanh",
    "tanh_grad",
]
