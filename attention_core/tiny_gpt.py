"""A tiny decoder-only Transformer (GPT) of characters, built from the course's own functions, with its backward
pass written out by hand.

The forward pass is the course in order: a character's embedding plus its position's embedding; then, in every
layer, **pre-norm** blocks added to the residual stream,

    x = x + MultiHead(RMSNorm(x))        # core.multi_head_trace with core.causal_mask: looks only backwards
    x = x + FFN(RMSNorm(x))              # W1 → GELU (activations.gelu_tanh's formula) → W2, each position alone

and at the end RMSNorm(x) · Eᵀ + b: the output layer reuses the embedding table E (tied weights) and adds a bias
(started at the log character frequencies, as module 04's MLP does). `forward` returns the logits and every
layer's and head's attention weights (layers, heads, T, T), which the site shows.

`loss_and_grads` runs the same forward, keeps what the backward needs, and goes back through it step by step:
cross-entropy → tied output layer → RMSNorm → (FFN, attention) × layers → embeddings. Each step is the chain
rule on one formula (the comments give them), checked against finite differences in the tests. `AdamW` and
`train_step` make the training loop; all of it is NumPy in float32 and deterministic for a given seed.

Parameters are a dict of arrays (`param_names(config)` gives their order): `tok` (V, d), `pos` (T, d), for each
layer `l{i}.norm1` (d), `l{i}.wq`, `l{i}.wk`, `l{i}.wv`, `l{i}.wo` (d, d), `l{i}.norm2` (d), `l{i}.w1` (d, f),
`l{i}.b1` (f), `l{i}.w2` (f, d), `l{i}.b2` (d), then `norm_f` (d) and `out_bias` (V). Matrices multiply from
the right (x @ W), and head h uses columns h·d_head … (h+1)·d_head of wq, wk, wv, as core.multi_head_attention.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .activations import GELU_TANH_COEFF, SQRT_2_OVER_PI
from .core import causal_mask, multi_head_trace, softmax

F32 = NDArray[np.float32]
Params = dict[str, np.ndarray]


@dataclass(frozen=True)
class Config:
    vocab_size: int
    context: int = 64  # the longest input (positions 0 … context − 1)
    d_model: int = 128
    n_layers: int = 4
    n_heads: int = 4
    d_ff: int = 512
    eps: float = 1e-5  # RMSNorm's ε

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def param_names(cfg: Config) -> list[str]:
    names = ["tok", "pos"]
    for i in range(cfg.n_layers):
        names += [f"l{i}.{n}" for n in ("norm1", "wq", "wk", "wv", "wo", "norm2", "w1", "b1", "w2", "b2")]
    return names + ["norm_f", "out_bias"]


def param_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    d, f = cfg.d_model, cfg.d_ff
    shapes: dict[str, tuple[int, ...]] = {"tok": (cfg.vocab_size, d), "pos": (cfg.context, d)}
    for i in range(cfg.n_layers):
        shapes.update(
            {
                f"l{i}.norm1": (d,),
                f"l{i}.wq": (d, d),
                f"l{i}.wk": (d, d),
                f"l{i}.wv": (d, d),
                f"l{i}.wo": (d, d),
                f"l{i}.norm2": (d,),
                f"l{i}.w1": (d, f),
                f"l{i}.b1": (f,),
                f"l{i}.w2": (f, d),
                f"l{i}.b2": (d,),
            }
        )
    shapes.update({"norm_f": (d,), "out_bias": (cfg.vocab_size,)})
    return shapes


def n_params(cfg: Config) -> int:
    return sum(math.prod(s) for s in param_shapes(cfg).values())


def init_params(cfg: Config, *, seed: int = 0, out_bias: np.ndarray | None = None) -> Params:
    """GPT-2's initialisation: N(0, 0.02) for embeddings and matrices, the two matrices that write into the
    residual stream (wo, w2) scaled by 1/√(2·layers), norm gains 1, biases 0 (`out_bias` if given)."""
    rng = np.random.default_rng(seed)
    p: Params = {}
    for name, shape in param_shapes(cfg).items():
        kind = name.split(".")[-1]
        if kind.startswith("norm"):
            a = np.ones(shape)
        elif kind in ("b1", "b2"):
            a = np.zeros(shape)
        elif name == "out_bias":
            a = np.zeros(shape) if out_bias is None else np.asarray(out_bias, dtype=np.float64)
        else:
            std = 0.02 / math.sqrt(2 * cfg.n_layers) if kind in ("wo", "w2") else 0.02
            a = rng.normal(0.0, std, shape)
        p[name] = a.astype(np.float32)
    return p


# --------------------------------------------------------------------------- the pieces and their backward


def rms_norm(x: np.ndarray, gain: np.ndarray, eps: float) -> np.ndarray:
    """x / √(mean(x²) + ε) · g, over the last axis (no mean subtraction, no bias)."""
    r = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
    return (x * r * gain).astype(x.dtype, copy=False)


def rms_norm_backward(dy: np.ndarray, x: np.ndarray, gain: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """With r = 1/√(mean(x²)+ε), x̂ = x·r, y = x̂·g:  dg = Σ dy·x̂;  dx = r·(dx̂ − x̂·mean(dx̂·x̂)), dx̂ = dy·g."""
    r = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
    xhat = x * r
    dgain = (dy * xhat).reshape(-1, x.shape[-1]).sum(axis=0)
    dxhat = dy * gain
    dx = r * (dxhat - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    return dx, dgain


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU's tanh form ½x(1 + tanh(√(2/π)(x + 0.044715x³))), as activations.gelu_tanh but in x's own dtype
    (x·x·x: NumPy's x**3 is 100× slower), so float32 stays float32; a test holds the two equal."""
    u = x * (x * x * x.dtype.type(GELU_TANH_COEFF) + 1) * x.dtype.type(SQRT_2_OVER_PI)
    return 0.5 * x * (1 + np.tanh(u))


def gelu_grad(x: np.ndarray) -> np.ndarray:
    """d/dx of `gelu`: ½(1 + t) + ½x(1 − t²)·√(2/π)(1 + 3·0.044715x²), t = tanh(u) (activations.gelu_tanh_grad)."""
    c, k = x.dtype.type(GELU_TANH_COEFF), x.dtype.type(SQRT_2_OVER_PI)
    x2 = x * x
    t = np.tanh(x * (x2 * c + 1) * k)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (k * (1 + 3 * c * x2))


def _split(a: np.ndarray, h: int) -> np.ndarray:
    """(B, T, h·d) → (B, h, T, d), the column blocks of core.multi_head_attention."""
    b, t, w = a.shape
    return a.reshape(b, t, h, w // h).transpose(0, 2, 1, 3)


def _merge(a: np.ndarray) -> np.ndarray:
    """(B, h, T, d) → (B, T, h·d)."""
    b, h, t, d = a.shape
    return a.transpose(0, 2, 1, 3).reshape(b, t, h * d)


def attention_backward(dout: np.ndarray, x: np.ndarray, tr: Any, p: Params, layer: str) -> tuple[np.ndarray, dict]:
    """Back through out = concat(A_h V_h) W_O with A = softmax(Q Kᵀ/√d + mask), Q = x W_Q, K = x W_K, V = x W_V.

    dW_O = concatᵀ·dout; dV = Aᵀ·d(head out); dA = d(head out)·Vᵀ; the softmax's backward row by row,
    dS = A ⊙ (dA − Σ_j dA·A) (masked keys have A = 0, so they get no gradient); dQ = dS·K/√d, dK = dSᵀ·Q/√d;
    then each of Q, K, V back through its projection to x."""
    h = tr.num_heads
    d_out = dout.reshape(-1, dout.shape[-1])
    grads = {f"{layer}.wo": tr.concat.reshape(-1, tr.concat.shape[-1]).T @ d_out}
    dhead = _split(dout @ p[f"{layer}.wo"].T, h)  # (B, h, T, d_head)
    A = tr.weights
    dA = dhead @ np.swapaxes(tr.V, -1, -2)
    dV = np.swapaxes(A, -1, -2) @ dhead
    dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
    dS /= np.float32(math.sqrt(tr.d_k))
    dQ = dS @ tr.K
    dK = np.swapaxes(dS, -1, -2) @ tr.Q
    x2 = x.reshape(-1, x.shape[-1])
    dx = np.zeros_like(x)
    for name, dproj in (("wq", dQ), ("wk", dK), ("wv", dV)):
        flat = _merge(dproj)
        grads[f"{layer}.{name}"] = x2.T @ flat.reshape(-1, flat.shape[-1])
        dx += flat @ p[f"{layer}.{name}"].T
    return dx, grads


# --------------------------------------------------------------------------- forward


@dataclass
class Forward:
    logits: np.ndarray  # (B, T, V) or (T, V)
    attention: np.ndarray  # (layers, B, heads, T, T) or (layers, heads, T, T)


def _as_batch(ids: Any, cfg: Config) -> tuple[np.ndarray, bool]:
    a = np.asarray(ids, dtype=np.int64)
    single = a.ndim == 1
    if single:
        a = a[None]
    if a.ndim != 2 or a.shape[1] < 1 or a.shape[1] > cfg.context:
        raise ValueError(f"ids must have shape (T,) or (B, T) with 1 <= T <= {cfg.context}, got {np.shape(ids)}")
    if a.min() < 0 or a.max() >= cfg.vocab_size:
        raise ValueError(f"ids must lie in 0 … {cfg.vocab_size - 1}")
    return a, single


def _run(p: Params, cfg: Config, ids: np.ndarray, keep: bool) -> tuple[np.ndarray, list[np.ndarray], list]:
    """The forward pass over a batch (B, T); with `keep`, every value the backward pass needs."""
    T = ids.shape[1]
    mask = causal_mask(T)
    x = p["tok"][ids] + p["pos"][:T]
    attention: list[np.ndarray] = []
    saved: list = []
    for i in range(cfg.n_layers):
        L = f"l{i}"
        a_in = rms_norm(x, p[f"{L}.norm1"], cfg.eps)
        tr = multi_head_trace(a_in, p[f"{L}.wq"], p[f"{L}.wk"], p[f"{L}.wv"], p[f"{L}.wo"], cfg.n_heads, mask=mask)
        attention.append(tr.weights)
        x_mid = x + tr.output
        f_in = rms_norm(x_mid, p[f"{L}.norm2"], cfg.eps)
        pre = f_in @ p[f"{L}.w1"] + p[f"{L}.b1"]
        act = gelu(pre)
        x_out = x_mid + act @ p[f"{L}.w2"] + p[f"{L}.b2"]
        if keep:
            saved.append((x, a_in, tr, x_mid, f_in, pre, act))
        x = x_out
    final = rms_norm(x, p["norm_f"], cfg.eps)
    logits = final @ p["tok"].T + p["out_bias"]
    if keep:
        saved.append((x, final))
    return logits, attention, saved


def forward(p: Params, cfg: Config, ids: Any) -> Forward:
    """Logits and attention weights of the ids (T,) — or a batch (B, T) — of one window, T ≤ context."""
    batch, single = _as_batch(ids, cfg)
    logits, attention, _ = _run(p, cfg, batch, keep=False)
    att = np.stack(attention)
    if single:
        return Forward(logits=logits[0], attention=att[:, 0])
    return Forward(logits=logits, attention=att)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def next_char_probs(p: Params, cfg: Config, ids: Any, temperature: float = 1.0) -> np.ndarray:
    """P(next | ids) from the last position, with the course's softmax (and its temperature)."""
    return softmax(forward(p, cfg, list(ids)[-cfg.context :]).logits[-1], temperature=temperature)


# --------------------------------------------------------------------------- loss and backward


def loss_and_grads(p: Params, cfg: Config, x: np.ndarray, y: np.ndarray) -> tuple[float, Params]:
    """Mean cross-entropy of the targets y (B, T) given inputs x (B, T), and its gradient for every parameter."""
    x, _ = _as_batch(x, cfg)
    B, T = x.shape
    logits, _, saved = _run(p, cfg, x, keep=True)
    logp = log_softmax(logits)
    n = B * T
    bi, ti = np.meshgrid(np.arange(B), np.arange(T), indexing="ij")
    loss = float(-logp[bi, ti, y].mean())
    # cross-entropy of softmax: d logits = softmax − one-hot, averaged over the n predictions
    dlogits = np.exp(logp)
    dlogits[bi, ti, y] -= 1.0
    dlogits /= np.float32(n)
    g: Params = {}
    x_last, final = saved.pop()
    dl2 = dlogits.reshape(n, -1)
    g["out_bias"] = dl2.sum(axis=0)
    g["tok"] = dl2.T @ final.reshape(n, -1)  # logits = final · Eᵀ: the tied output layer's share of dE
    dfinal = dlogits @ p["tok"]
    dx, g["norm_f"] = rms_norm_backward(dfinal, x_last, p["norm_f"], cfg.eps)
    for i in reversed(range(cfg.n_layers)):
        L = f"l{i}"
        x_in, a_in, tr, x_mid, f_in, pre, act = saved[i]
        # x_out = x_mid + GELU(f_in W1 + b1) W2 + b2
        d2 = dx.reshape(n, -1)
        g[f"{L}.w2"] = act.reshape(n, -1).T @ d2
        g[f"{L}.b2"] = d2.sum(axis=0)
        dpre = (dx @ p[f"{L}.w2"].T) * gelu_grad(pre)
        dp2 = dpre.reshape(n, -1)
        g[f"{L}.w1"] = f_in.reshape(n, -1).T @ dp2
        g[f"{L}.b1"] = dp2.sum(axis=0)
        df_in = dpre @ p[f"{L}.w1"].T
        dnorm, g[f"{L}.norm2"] = rms_norm_backward(df_in, x_mid, p[f"{L}.norm2"], cfg.eps)
        dx = dx + dnorm  # the residual passes dx through unchanged, the FFN adds its share
        # x_mid = x_in + Attention(RMSNorm(x_in))
        da_in, ga = attention_backward(dx, a_in, tr, p, L)
        g.update(ga)
        dnorm, g[f"{L}.norm1"] = rms_norm_backward(da_in, x_in, p[f"{L}.norm1"], cfg.eps)
        dx = dx + dnorm
    # x = E[ids] + P[:T]
    dpos = np.zeros_like(p["pos"])
    dpos[:T] = dx.sum(axis=0)
    g["pos"] = dpos
    np.add.at(g["tok"], x.reshape(-1), dx.reshape(n, -1))
    return loss, {k: v.astype(p[k].dtype, copy=False) for k, v in g.items()}


def loss(p: Params, cfg: Config, x: np.ndarray, y: np.ndarray) -> float:
    """Mean cross-entropy of y (B, T) given x (B, T), forward only."""
    x, _ = _as_batch(x, cfg)
    logp = log_softmax(_run(p, cfg, x, keep=False)[0])
    bi, ti = np.meshgrid(np.arange(x.shape[0]), np.arange(x.shape[1]), indexing="ij")
    return float(-logp[bi, ti, y].mean())


# --------------------------------------------------------------------------- training


@dataclass
class AdamW:
    """Adam with decoupled weight decay on the matrices (not on norms, biases or positions)."""

    lr: float = 3e-3
    betas: tuple[float, float] = (0.9, 0.99)
    eps: float = 1e-8
    weight_decay: float = 0.1
    step: int = 0
    m: dict | None = None
    v: dict | None = None

    def update(self, p: Params, g: Params, lr: float) -> None:
        if self.m is None or self.v is None:
            self.m = {k: np.zeros_like(a) for k, a in p.items()}
            self.v = {k: np.zeros_like(a) for k, a in p.items()}
        self.step += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.step, 1 - b2**self.step
        for k, a in p.items():
            m, v, gk = self.m[k], self.v[k], g[k]
            m *= b1
            m += (1 - b1) * gk
            v *= b2
            v += (1 - b2) * gk * gk
            if a.ndim == 2 and k != "pos" and self.weight_decay:
                a *= np.float32(1 - lr * self.weight_decay)
            a -= (np.float32(lr / c1) * m / (np.sqrt(v / np.float32(c2)) + np.float32(self.eps))).astype(np.float32)


def clip_gradients(g: Params, max_norm: float) -> float:
    """Scale all gradients together so their global L2 norm is at most `max_norm`; returns the norm before."""
    norm = float(np.sqrt(sum(float((a.astype(np.float64) ** 2).sum()) for a in g.values())))
    if norm > max_norm:
        s = np.float32(max_norm / norm)
        for a in g.values():
            a *= s
    return norm


def lr_at(step: int, *, peak: float, warmup: int, total: int, floor: float = 0.1) -> float:
    """Linear warm-up to `peak` over `warmup` steps, then a cosine down to `floor`·peak at `total`."""
    if step <= warmup:
        return peak * step / max(warmup, 1)
    t = min(1.0, (step - warmup) / max(total - warmup, 1))
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * t)))


__all__ = [
    "AdamW",
    "Config",
    "Forward",
    "attention_backward",
    "clip_gradients",
    "forward",
    "gelu",
    "gelu_grad",
    "init_params",
    "log_softmax",
    "loss",
    "loss_and_grads",
    "lr_at",
    "n_params",
    "next_char_probs",
    "param_names",
    "param_shapes",
    "rms_norm",
    "rms_norm_backward",
]
