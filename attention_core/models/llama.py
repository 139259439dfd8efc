"""The Llama architecture's forward pass in plain NumPy — small enough to read in one sitting.

One token sequence goes in; out come the next-token logits at every position, the attention weights of
every layer and head, and (on request) the residual stream after every layer.  This is the computation
of Hugging Face's `LlamaForCausalLM` (and of Meta's Llama), written for reading, not speed:

    x = embedding[tokens]                                  # (T, d): one row per token
    for each of the n_layers blocks:
        x = x + attention(rms_norm(x))                     # tokens look at earlier tokens
        x = x + swiglu_mlp(rms_norm(x))                    # each token is processed on its own
    logits = rms_norm(x) @ embedding.T                     # tied LM head: score every vocabulary entry

Names follow the papers: RMSNorm (Zhang & Sennrich 2019), rotary position embeddings "RoPE" (Su et al.
2021), grouped-query attention "GQA" (Ainslie et al. 2023), SwiGLU (Shazeer 2020), and the attention
itself, softmax(QKᵀ/√d_head) V (Vaswani et al. 2017).

Everything is float32 and deterministic: the same tokens give bit-identical outputs on the same machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..core import causal_mask, softmax
from .gguf_reader import LayerWeights, LlamaConfig, LlamaWeights

F32 = NDArray[np.float32]


@dataclass
class ForwardResult:
    """What one forward pass returns.

    `attention` holds n_layers·n_heads·T² float32 numbers (SmolLM2: 270·T²; T = 256 → 71 MB), so keep the
    texts short — this is for looking at attention, not for long generation."""

    tokens: list[int]
    logits: F32  # (T, vocab): row t scores the token that comes *after* position t
    attention: F32  # (n_layers, n_heads, T, T): [l, h, query i, key j], each row sums to 1
    residuals: F32 | None = None  # (n_layers + 1, T, d_model): [0] = embeddings, [l + 1] = after block l

    def next_token_probs(self, position: int = -1) -> F32:
        """softmax of the logits at `position`: the model's distribution over the next token."""
        return softmax(self.logits[position])


# ------------------------------------------------------------------------------------- the pieces


def rms_norm(x: F32, gain: F32, eps: float) -> F32:
    """RMSNorm: divide each row by its root-mean-square, then scale each feature by a learned gain.

    Unlike LayerNorm there is no mean subtraction and no bias: only the size of the vector is normalised,
    which keeps the residual stream's scale under control at every layer."""
    ms = np.mean(np.square(x), axis=-1, keepdims=True)
    return (x / np.sqrt(ms + np.float32(eps))) * gain


def rope_cos_sin(n_positions: int, dim: int, theta: float) -> tuple[F32, F32]:
    """cos and sin of the rotary angles, (T, dim/2): position p turns pair i by p · θ^(−2i/dim).

    Low pairs turn fast (they tell neighbours apart), high pairs slowly (they still differ for tokens
    thousands of positions apart).  The angles are computed in float64 and rounded to float32 once."""
    inv_freq = 1.0 / (theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim))  # (dim/2,)
    angles = np.outer(np.arange(n_positions, dtype=np.float64), inv_freq.astype(np.float32))
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def apply_rope(x: F32, cos: F32, sin: F32) -> F32:
    """Rotate each adjacent pair (x[2i], x[2i+1]) of every head vector by its position's angle.

    x: (heads, T, head_dim) in the GGUF's *interleaved* layout (see gguf_reader: llama.cpp's converter
    reordered the Q/K rows so that rotation pairs are adjacent).  Because queries and keys are rotated by
    their own positions, q_i · k_j depends only on the offset i − j: attention sees relative positions."""
    pairs = x.reshape(*x.shape[:-1], -1, 2)  # (heads, T, head_dim/2, 2)
    a, b = pairs[..., 0], pairs[..., 1]
    out = np.empty_like(pairs)
    out[..., 0] = a * cos - b * sin
    out[..., 1] = a * sin + b * cos
    return out.reshape(x.shape)


def split_heads(x: F32, n_heads: int) -> F32:
    """(T, n_heads·head_dim) → (n_heads, T, head_dim)."""
    t, width = x.shape
    return x.reshape(t, n_heads, width // n_heads).transpose(1, 0, 2)


def grouped_query_attention(
    x: F32, layer: LayerWeights, cfg: LlamaConfig, cos: F32, sin: F32, mask: NDArray[np.bool_]
) -> tuple[F32, F32]:
    """Causal multi-head attention where groups of query heads share one key/value head.

    SmolLM2 has 9 query heads but only 3 key/value heads: query heads 0–2 use KV head 0, 3–5 KV head 1,
    6–8 KV head 2 (the same grouping as Hugging Face's `repeat_kv` and llama.cpp).  Sharing K and V makes
    the KV cache 3× smaller at little cost in quality.

    Returns the block's output (T, d_model) and the attention weights (n_heads, T, T)."""
    q = split_heads(x @ layer.w_q.T, cfg.n_heads)  # (9, T, 64)
    k = split_heads(x @ layer.w_k.T, cfg.n_kv_heads)  # (3, T, 64)
    v = split_heads(x @ layer.w_v.T, cfg.n_kv_heads)  # (3, T, 64)
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)  # positions enter here, and only here
    k = np.repeat(k, cfg.group_size, axis=0)  # KV head j serves query heads j·g … j·g + g − 1
    v = np.repeat(v, cfg.group_size, axis=0)
    scores = q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(cfg.head_dim))  # (9, T, T): how well i matches j
    scores = np.where(mask, scores, np.float32(-np.inf))  # causal: position i may not look at j > i
    weights = softmax(scores, axis=-1)  # each row: a probability distribution over keys
    heads = weights @ v  # (9, T, 64): a weighted average of values
    merged = heads.transpose(1, 0, 2).reshape(x.shape[0], cfg.n_heads * cfg.head_dim)
    return merged @ layer.w_o.T, weights


def silu(x: F32) -> F32:
    """SiLU (a.k.a. swish): x · sigmoid(x)."""
    with np.errstate(over="ignore"):  # exp(-x) → inf for x ≪ 0 gives x / inf = -0, the right limit
        return x / (np.float32(1.0) + np.exp(-x))


def swiglu_mlp(x: F32, layer: LayerWeights) -> F32:
    """The feed-forward block: down( silu(gate(x)) ⊙ up(x) ) — a gated MLP, 576 → 1536 → 576."""
    return (silu(x @ layer.w_gate.T) * (x @ layer.w_up.T)) @ layer.w_down.T


# ------------------------------------------------------------------------------------ the whole model


def forward(weights: LlamaWeights, tokens: Sequence[int], *, return_residuals: bool = False) -> ForwardResult:
    """Run the model on `tokens` (ids); see `ForwardResult` for what comes back."""
    cfg = weights.config
    ids = [int(t) for t in tokens]
    if not ids:
        raise ValueError("forward: need at least one token")
    if min(ids) < 0 or max(ids) >= cfg.vocab_size:
        raise ValueError(f"forward: token ids must be in [0, {cfg.vocab_size})")
    if weights.rope_layout != "interleaved":
        raise ValueError(f"forward: unsupported rope_layout {weights.rope_layout!r}")
    n = len(ids)

    cos, sin = rope_cos_sin(n, cfg.rope_dim, cfg.rope_theta)
    mask = causal_mask(n)
    x = weights.token_embedding[ids]  # (T, d) — a copy, not a view
    attention = np.empty((cfg.n_layers, cfg.n_heads, n, n), dtype=np.float32)
    residuals = np.empty((cfg.n_layers + 1, n, cfg.d_model), dtype=np.float32) if return_residuals else None
    if residuals is not None:
        residuals[0] = x

    for i, layer in enumerate(weights.layers):
        attn_out, attention[i] = grouped_query_attention(
            rms_norm(x, layer.attn_norm, cfg.rms_eps), layer, cfg, cos, sin, mask
        )
        x = x + attn_out  # residual connection
        x = x + swiglu_mlp(rms_norm(x, layer.ffn_norm, cfg.rms_eps), layer)
        if residuals is not None:
            residuals[i + 1] = x

    logits = rms_norm(x, weights.final_norm, cfg.rms_eps) @ weights.lm_head.T  # (T, vocab)
    return ForwardResult(tokens=ids, logits=logits, attention=attention, residuals=residuals)


def log_softmax(logits: F32) -> F32:
    m = np.max(logits, axis=-1, keepdims=True)
    return logits - m - np.log(np.sum(np.exp(logits - m), axis=-1, keepdims=True))


def perplexity(weights: LlamaWeights, tokens: Sequence[int]) -> float:
    """exp(mean negative log-likelihood) of tokens[1:] given what came before (needs ≥ 2 tokens)."""
    ids = [int(t) for t in tokens]
    if len(ids) < 2:
        raise ValueError("perplexity: need at least two tokens")
    logp = log_softmax(forward(weights, ids).logits[:-1])
    nll = -logp[np.arange(len(ids) - 1), ids[1:]].astype(np.float64)
    return float(np.exp(nll.mean()))


# ------------------------------------------------------------------------- inside the feed-forward block


def ffn_gates(weights: LlamaWeights, tokens: Sequence[int]) -> F32:
    """What enters SiLU in every layer's SwiGLU block: the gate pre-activations rms_norm(x) · W_gateᵀ,
    (n_layers, T, d_ffn) — the same pass as `forward` (which it repeats rather than changes), stopped short of
    the logits. SiLU of these values is the gate each hidden unit multiplies its `up` value by."""
    cfg = weights.config
    ids = [int(t) for t in tokens]
    if not ids:
        raise ValueError("ffn_gates: need at least one token")
    n = len(ids)
    cos, sin = rope_cos_sin(n, cfg.rope_dim, cfg.rope_theta)
    mask = causal_mask(n)
    x = weights.token_embedding[ids]
    gates = np.empty((cfg.n_layers, n, cfg.d_ffn), dtype=np.float32)
    for i, layer in enumerate(weights.layers):
        x = x + grouped_query_attention(rms_norm(x, layer.attn_norm, cfg.rms_eps), layer, cfg, cos, sin, mask)[0]
        normed = rms_norm(x, layer.ffn_norm, cfg.rms_eps)
        gates[i] = normed @ layer.w_gate.T
        x = x + (silu(gates[i]) * (normed @ layer.w_up.T)) @ layer.w_down.T
    return gates


def logit_lens(weights: LlamaWeights, residuals: F32, position: int = -1) -> F32:
    """The logit lens (nostalgebraist 2020): read the residual stream out *early*, as if the model stopped there.

    residuals: `ForwardResult.residuals`, (n_layers + 1, T, d_model). Row l of the result is the next-token
    logits at `position` after l blocks (row 0: the token embedding alone), through the model's own final RMSNorm
    and LM head. The last row is exactly the model's output (`ForwardResult.logits[position]`)."""
    cfg = weights.config
    stream = residuals[:, position, :]  # (n_layers + 1, d_model)
    return rms_norm(stream, weights.final_norm, cfg.rms_eps) @ weights.lm_head.T  # (n_layers + 1, vocab)


__all__ = [
    "ForwardResult",
    "apply_rope",
    "ffn_gates",
    "forward",
    "grouped_query_attention",
    "log_softmax",
    "perplexity",
    "rms_norm",
    "rope_cos_sin",
    "silu",
    "swiglu_mlp",
]


# ------------------------------------------------------------------ one layer's queries and keys (the neuron view)


def layer_queries_keys(weights: LlamaWeights, tokens: Sequence[int], layer: int) -> tuple[F32, F32]:
    """The queries (n_heads, T, head_dim) and keys (n_kv_heads, T, head_dim) of block `layer`, after RoPE.

    These are the very vectors `grouped_query_attention` multiplies: query head h is scored against key head
    h // group_size, and softmax(q_h · k_{h // g}ᵀ / √head_dim, causal) is `forward(...).attention[layer, h]`.
    The blocks before `layer` run as in `forward`; nothing after it runs. (A separate function, so the
    forward pass itself stays as it is.)"""
    cfg = weights.config
    ids = [int(t) for t in tokens]
    if not ids:
        raise ValueError("layer_queries_keys: need at least one token")
    if not 0 <= layer < cfg.n_layers:
        raise ValueError(f"layer_queries_keys: layer must be in [0, {cfg.n_layers}), got {layer}")
    if weights.rope_layout != "interleaved":
        raise ValueError(f"layer_queries_keys: unsupported rope_layout {weights.rope_layout!r}")
    n = len(ids)
    cos, sin = rope_cos_sin(n, cfg.rope_dim, cfg.rope_theta)
    mask = causal_mask(n)
    x = weights.token_embedding[ids]
    for block in weights.layers[:layer]:
        attn_out, _ = grouped_query_attention(rms_norm(x, block.attn_norm, cfg.rms_eps), block, cfg, cos, sin, mask)
        x = x + attn_out
        x = x + swiglu_mlp(rms_norm(x, block.ffn_norm, cfg.rms_eps), block)
    block = weights.layers[layer]
    normed = rms_norm(x, block.attn_norm, cfg.rms_eps)
    q = apply_rope(split_heads(normed @ block.w_q.T, cfg.n_heads), cos, sin)
    k = apply_rope(split_heads(normed @ block.w_k.T, cfg.n_kv_heads), cos, sin)
    return q, k


__all__ += ["layer_queries_keys"]
