"""A tiny decoder-only Transformer made of `autograd.Tensor` operations, piece by piece: the reference for the
hands-on module, where the learner writes each piece (the exercises' checks compare with these), and the model the
build trains to draw the reference curves.

Shapes: a batch of B sequences of T token ids; width d (`d_model`); h heads of d_k = d / h columns each (module
05's d_k); the feed-forward width d_ff; V tokens in the vocabulary. Matrices multiply from the right (x @ W), as
module 05 writes.

    embed(params, x)                      (B, T) ids → (B, T, d): the token's row plus the position's row
    rms_norm(x, gain)                     x / √(mean(x²) + ε) · gain, over the last axis
    causal_self_attention(x, layer, h)    (B, T, d) → (B, T, d) and the weights (B, h, T, T): Q, K, V = x W_Q,
                                          x W_K, x W_V, each split into h heads *after* the projection; the causal
                                          mask before the softmax; the heads' outputs side by side, then W_O
    feed_forward(x, layer)                GELU(x W1 + b1) W2 + b2, each position on its own
    block(x, layer, h)                    pre-norm: x + attention(norm(x)), then + feed_forward(norm(x))
    cross_entropy(logits, targets)        mean of −log softmax(logits)[target], from Tensor operations
    gpt(params, x, h)                     the whole model → logits (B, T, V) and every layer's weights

The output layer has its own matrix (logits = h · out + out_bias). Module 07's model reuses the token table there
instead ("tied weights", fewer parameters); on the repeated-sequence task a tied model kept predicting the token it
had just read and formed no induction head in 500 steps (3 seeds), where the untied one formed it in 160–190.
`init_params` starts it like GPT-2: N(0, 0.02), the two matrices that write into the residual stream scaled by
1/√(2·layers), norm gains 1, biases 0.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .autograd import Tensor

Params = dict[str, Any]  # {"tok", "pos", "layers": [{"norm1", "wq", …}], "norm_f", "out", "out_bias"}: Tensors
EPS = 1e-5  # RMSNorm's ε


@dataclass(frozen=True)
class Config:
    vocab_size: int
    context: int  # the longest sequence (positions 0 … context − 1)
    d_model: int = 32
    n_layers: int = 2
    n_heads: int = 2
    d_ff: int = 64

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


LAYER_KEYS = ("norm1", "wq", "wk", "wv", "wo", "norm2", "w1", "b1", "w2", "b2")


def init_params(cfg: Config, *, seed: int = 0, dtype: Any = np.float32, out_bias: Any = None) -> Params:
    """Fresh parameters (Tensors with requires_grad=True); `out_bias` starts the output bias (e.g. the log
    frequencies of the tokens, so that step 0 already knows which tokens are common)."""
    if cfg.d_model % cfg.n_heads:
        raise ValueError(f"d_model = {cfg.d_model} is not divisible by n_heads = {cfg.n_heads}")
    rng = np.random.default_rng(seed)
    d, f = cfg.d_model, cfg.d_ff
    residual_std = 0.02 / math.sqrt(2 * cfg.n_layers)

    def param(array: np.ndarray) -> Tensor:
        return Tensor(np.asarray(array, dtype=dtype), requires_grad=True)

    def normal(*shape: int, std: float = 0.02) -> Tensor:
        return param(rng.normal(0.0, std, shape))

    params: Params = {"tok": normal(cfg.vocab_size, d), "pos": normal(cfg.context, d), "layers": []}
    for _ in range(cfg.n_layers):
        params["layers"].append(
            {
                "norm1": param(np.ones(d)),
                "wq": normal(d, d),
                "wk": normal(d, d),
                "wv": normal(d, d),
                "wo": normal(d, d, std=residual_std),
                "norm2": param(np.ones(d)),
                "w1": normal(d, f),
                "b1": param(np.zeros(f)),
                "w2": normal(f, d, std=residual_std),
                "b2": param(np.zeros(d)),
            }
        )
    params["norm_f"] = param(np.ones(d))
    params["out"] = normal(d, cfg.vocab_size)
    params["out_bias"] = param(np.zeros(cfg.vocab_size) if out_bias is None else out_bias)
    return params


def count_params(params: Params) -> int:
    from .autograd import parameters_of

    return sum(t.data.size for t in parameters_of(params))


# --------------------------------------------------------------------------- the pieces (the exercises' answers)


def embed(params: Params, x: np.ndarray) -> Tensor:
    """(B, T) token ids → (B, T, d): each token's row of `tok` plus its position's row of `pos`."""
    T = x.shape[-1]
    return params["tok"][x] + params["pos"][:T]


def rms_norm(x: Tensor, gain: Tensor, eps: float = EPS) -> Tensor:
    """x / √(mean(x²) + ε) · gain over the last axis: every position's vector to the same size, then a learned
    gain per column (no mean subtracted, no bias: RMSNorm, as SmolLM2 and module 07's model use)."""
    return x / ((x * x).mean(axis=-1, keepdims=True) + eps).sqrt() * gain


def split_heads(t: Tensor, n_heads: int) -> Tensor:
    """(B, T, d) → (B, h, T, d/h): each head gets its own d/h columns of every position."""
    B, T, d = t.shape
    return t.reshape(B, T, n_heads, d // n_heads).transpose(0, 2, 1, 3)


def merge_heads(t: Tensor) -> Tensor:
    """(B, h, T, d/h) → (B, T, d): the heads' outputs side by side again."""
    B, h, T, dh = t.shape
    return t.transpose(0, 2, 1, 3).reshape(B, T, h * dh)


def causal_mask(T: int) -> np.ndarray:
    """True where position i may not look (j > i): the future."""
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def causal_self_attention(x: Tensor, layer: dict, n_heads: int) -> tuple[Tensor, Tensor]:
    """Multi-head causal self-attention → (output (B, T, d), weights (B, h, T, T))."""
    q = split_heads(x @ layer["wq"], n_heads)
    k = split_heads(x @ layer["wk"], n_heads)
    v = split_heads(x @ layer["wv"], n_heads)
    d_k = q.shape[-1]
    scores = (q @ k.T) / math.sqrt(d_k)
    weights = scores.masked_fill(causal_mask(x.shape[1]), -np.inf).softmax(axis=-1)
    return merge_heads(weights @ v) @ layer["wo"], weights


def feed_forward(x: Tensor, layer: dict) -> Tensor:
    """GELU(x W1 + b1) W2 + b2: the same two-layer network at every position."""
    return (x @ layer["w1"] + layer["b1"]).gelu() @ layer["w2"] + layer["b2"]


def block(x: Tensor, layer: dict, n_heads: int) -> tuple[Tensor, Tensor]:
    """A pre-norm decoder block → (x, the attention weights): each sub-layer reads a normalised copy and adds its
    result to the residual stream x."""
    attended, weights = causal_self_attention(rms_norm(x, layer["norm1"]), layer, n_heads)
    x = x + attended
    x = x + feed_forward(rms_norm(x, layer["norm2"]), layer)
    return x, weights


def cross_entropy(logits: Tensor, targets: np.ndarray) -> Tensor:
    """Mean over every position of −log softmax(logits)[target], from Tensor operations (subtracting the row's
    maximum, a constant, keeps exp from overflowing and changes nothing)."""
    V = logits.shape[-1]
    flat = logits.reshape(-1, V)
    shifted = flat - flat.data.max(axis=-1, keepdims=True)
    log_probs = shifted - shifted.exp().sum(axis=-1, keepdims=True).log()
    ids = np.asarray(targets).reshape(-1)
    return -log_probs[np.arange(len(ids)), ids].mean()


def gpt(params: Params, x: np.ndarray, n_heads: int) -> tuple[Tensor, list[np.ndarray]]:
    """The whole model: logits (B, T, V) for the next token at every position, and each layer's attention
    weights (B, h, T, T) as arrays."""
    h = embed(params, x)
    maps = []
    for layer in params["layers"]:
        h, weights = block(h, layer, n_heads)
        maps.append(weights.data)
    h = rms_norm(h, params["norm_f"])
    return h @ params["out"] + params["out_bias"], maps


__all__ = [
    "Config",
    "block",
    "causal_mask",
    "causal_self_attention",
    "count_params",
    "cross_entropy",
    "embed",
    "feed_forward",
    "gpt",
    "init_params",
    "merge_heads",
    "rms_norm",
    "split_heads",
]
