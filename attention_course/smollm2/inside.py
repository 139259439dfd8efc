"""Inside one block of SmolLM2-135M: its sizes, one layer's queries and keys (qkv-explained), the SwiGLU gates of
the feed-forward part (activation-function-explained)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

import attention_core.activations
from builder import cache as cachestore
from builder.model import BuildOptions

from .store import cached_result, check_text, loaded_model, model_path


def model_config(options: BuildOptions):
    """SmolLM2-135M's sizes as its GGUF metadata states them (attention_core.models.LlamaConfig; no weights are
    loaded; cached)."""
    path = model_path(options)

    def compute():
        from attention_core.models.gguf_reader import open_gguf, read_config

        return read_config(open_gguf(path))

    return cached_result(options, compute, "model-config")


@dataclass(frozen=True)
class ModelShape:
    """The sizes transformer-explained shows, named as it names them (from `model_config`)."""

    name: str
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ffn: int
    vocab_size: int
    context_length: int


def model_shape(options: BuildOptions) -> ModelShape:
    c = model_config(options)
    return ModelShape(
        c.name, c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.head_dim, c.d_ffn, c.vocab_size, c.context_length
    )


@dataclass(frozen=True)
class QueryKeyRun:
    """One sentence's queries and keys at one layer, after RoPE (attention_core.models.llama.layer_queries_keys):
    query head h is scored against key head h // group_size."""

    text: str
    tokens: list[str]
    layer: int
    queries: np.ndarray  # (n_heads, T, head_dim) float32
    keys: np.ndarray  # (n_kv_heads, T, head_dim) float32

    @property
    def group_size(self) -> int:
        return self.queries.shape[0] // self.keys.shape[0]


def query_key_run(options: BuildOptions, text: str, layer: int) -> QueryKeyRun:
    """`text`'s queries and keys at `layer` (cached like `sentence_run`; the same input checks)."""
    check_text(options, text)

    def compute() -> QueryKeyRun:
        from attention_core.models.llama import layer_queries_keys

        model = loaded_model(options)
        ids = model.encode(text)
        q, k = layer_queries_keys(model.weights, ids, layer)
        return QueryKeyRun(text, model.tokenizer.token_strings(ids), layer, q, k)

    return cached_result(options, compute, "model-queries-keys", text, str(layer))


GATE_NEAR_ZERO = 0.05  # |SiLU(gate)| below this counts as a gate that is (almost) shut
GATE_BINS = (-4.0, 4.0, 40)  # the histogram of gate pre-activations: 40 bins of 0.2 on [−4, 4], the ends open
_ACTIVATIONS_CODE = Path(attention_core.activations.__file__)


@dataclass(frozen=True)
class GateStats:
    """One sentence's SwiGLU gates in every layer of SmolLM2-135M: the model's sizes (from the GGUF metadata) and,
    per layer, the share of gate values g that are negative, the share with |SiLU(g)| < GATE_NEAR_ZERO, and a
    histogram of g (values beyond the range counted in the end bins)."""

    text: str
    tokens: list[str]
    n_layers: int
    d_model: int
    d_ffn: int
    negative: list[float]
    near_zero: list[float]
    histogram: list[list[int]]
    bins: tuple[float, float, int]
    near_zero_limit: float


def ffn_gate_stats(options: BuildOptions, text: str) -> GateStats:
    """`text` through SmolLM2-135M (cached), reduced to the statistics of its SwiGLU gates."""
    check_text(options, text, fits="are allowed")

    def compute() -> GateStats:
        from attention_core.activations import silu
        from attention_core.models.llama import ffn_gates

        model = loaded_model(options)
        ids = model.encode(text)
        gates = ffn_gates(model.weights, ids).astype(np.float64)  # (layers, T, d_ffn)
        lo, hi, count = GATE_BINS
        width = (hi - lo) / count
        index = np.clip(np.floor((gates - lo) / width), 0, count - 1).astype(np.int64)
        histogram = [np.bincount(index[layer].ravel(), minlength=count).tolist() for layer in range(gates.shape[0])]
        cfg = model.config
        return GateStats(
            text,
            model.tokenizer.token_strings(ids),
            cfg.n_layers,
            cfg.d_model,
            cfg.d_ffn,
            (gates < 0).mean(axis=(1, 2)).tolist(),
            (np.abs(silu(gates)) < GATE_NEAR_ZERO).mean(axis=(1, 2)).tolist(),
            histogram,
            GATE_BINS,
            GATE_NEAR_ZERO,
        )

    return cached_result(options, compute, "model-ffn-gates", cachestore.file_digest(_ACTIVATIONS_CODE), text)
