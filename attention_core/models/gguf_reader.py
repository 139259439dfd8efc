"""Read a Llama-architecture GGUF file into plain float32 NumPy arrays (`LlamaWeights`).

GGUF is llama.cpp's single-file format: a table of metadata (key → value: the architecture's sizes, the
tokenizer's vocabulary and merges, …) followed by the tensors, most of them quantised.  SmolLM2-135M in
`SmolLM2-135M-Instruct.Q4_1.gguf` stores the token embedding as Q8_0 (blocks of 32 int8 + one float16
scale), the 2-D layer matrices as Q4_1 (blocks of 32 4-bit values + float16 scale and minimum) and the
norm weights as float32.  The `gguf` package (the reader published by llama.cpp) parses the file and
dequantises with NumPy (`gguf.quants.dequantize`); we only arrange the result.

The `gguf` package is imported inside the functions (`optional_import`), not at module level: in the
browser (Pyodide) there is no `gguf`, and `import attention_core` / `import attention_core.models` must
keep working there.

Layout conventions (kept exactly as in the file):

* every matrix is (out_features, in_features), like PyTorch's `nn.Linear.weight`: `y = x @ W.T`;
* **Q and K rows are in llama.cpp's interleaved RoPE order.**  Hugging Face's Llama applies RoPE
  "rotate-half" style: inside each head, dimension i is rotated together with dimension i + head_dim/2.
  llama.cpp (like Meta's original Llama code) rotates *adjacent* pairs (2i, 2i+1).  So that its kernel works
  on HF checkpoints, `convert_hf_to_gguf.py` permutes the rows of `q_proj` and `k_proj` of every head:
  new row 2i = old row i, new row 2i+1 = old row i + head_dim/2.  We do **not** undo that: `llama.py`
  applies RoPE to adjacent pairs (`rope_layout == "interleaved"`), which is the same rotation on the same
  numbers, only stored in another order.  Attention scores are dot products q·k summed over all dimensions
  of a head, and Q and K went through the same permutation, so the scores — and everything after them —
  are identical to Hugging Face's.  (V and the output projection were never permuted.)
  `unpermute_rope_rows` gives the Hugging Face row order when one needs it, e.g. to compare weights.
"""

from __future__ import annotations

import gc
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

F32 = NDArray[np.float32]

_ROW_CHUNK = 4096  # dequantise big matrices this many rows at a time: temporaries stay a few MB


class GGUFFormatError(ValueError):
    """The GGUF file is not a Llama model this reader understands (wrong architecture, missing tensor…)."""


@dataclass(frozen=True)
class LlamaConfig:
    """The architecture's sizes, read from the GGUF metadata (`llama.*` keys)."""

    n_layers: int  # llama.block_count
    d_model: int  # llama.embedding_length
    n_heads: int  # llama.attention.head_count (query heads)
    n_kv_heads: int  # llama.attention.head_count_kv (key/value heads, shared by groups of query heads)
    head_dim: int  # d_model // n_heads
    d_ffn: int  # llama.feed_forward_length (the SwiGLU hidden size)
    vocab_size: int  # llama.vocab_size, else the number of tokens
    context_length: int  # llama.context_length (trained context)
    rope_theta: float  # llama.rope.freq_base
    rope_dim: int  # llama.rope.dimension_count (how many dims of a head are rotated)
    rms_eps: float  # llama.attention.layer_norm_rms_epsilon
    tied_embeddings: bool  # no `output.weight`: the LM head is the token embedding matrix
    name: str = ""  # general.name

    @property
    def group_size(self) -> int:
        """Query heads per key/value head (grouped-query attention)."""
        return self.n_heads // self.n_kv_heads


@dataclass
class LayerWeights:
    """One transformer block. Matrices are (out, in); Q/K rows in interleaved-RoPE order (see module doc)."""

    attn_norm: F32  # (d_model,)            RMSNorm gain before attention
    w_q: F32  # (n_heads*head_dim, d_model)
    w_k: F32  # (n_kv_heads*head_dim, d_model)
    w_v: F32  # (n_kv_heads*head_dim, d_model)
    w_o: F32  # (d_model, n_heads*head_dim)
    ffn_norm: F32  # (d_model,)            RMSNorm gain before the MLP
    w_gate: F32  # (d_ffn, d_model)
    w_up: F32  # (d_ffn, d_model)
    w_down: F32  # (d_model, d_ffn)


@dataclass
class LlamaWeights:
    """Everything the forward pass needs, as float32 arrays."""

    config: LlamaConfig
    token_embedding: F32  # (vocab, d_model)
    layers: list[LayerWeights]
    final_norm: F32  # (d_model,)
    lm_head: F32  # (vocab, d_model); the same array object as token_embedding when tied
    rope_layout: str = "interleaved"
    source: str = ""  # the file it was read from
    metadata: dict[str, Any] = field(default_factory=dict)  # scalar metadata (no token lists)

    def nbytes(self) -> int:
        arrays = [self.token_embedding, self.final_norm]
        if self.lm_head is not self.token_embedding:
            arrays.append(self.lm_head)
        for layer in self.layers:
            arrays += [getattr(layer, f) for f in LayerWeights.__dataclass_fields__]
        return sum(a.nbytes for a in arrays)


# ----------------------------------------------------------------------------------------- metadata


def optional_import(name: str, pip_name: str) -> Any:
    """Import an optional dependency when a function first needs it, with an install hint if it is missing.

    `importlib.import_module` rather than an `import` statement on purpose: the build scans the
    attention_core sources' import statements (`builder.pyodide_assets.package_imports`) to pre-import
    them into the browser's memory snapshot, where gguf and tokenizers do not exist."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ImportError(f"this needs the `{name.split('.')[0]}` package (pip install {pip_name})") from e


def _gguf() -> Any:
    return optional_import("gguf", "gguf==0.19.0")


def _open(path: str | Path) -> Any:
    return _gguf().GGUFReader(str(path), "r")


def field_value(reader: Any, key: str, default: Any = None) -> Any:
    """A metadata value as a Python scalar / str / list (`default` when the key is absent)."""
    f = reader.fields.get(key)
    if f is None:
        return default
    return f.contents()


def read_metadata(path: str | Path, *, include_arrays: bool = False) -> dict[str, Any]:
    """The GGUF metadata as a dict. Array values (token lists, merges) only with `include_arrays`."""
    gguf = _gguf()

    reader = _open(path)
    out: dict[str, Any] = {}
    for key, f in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        if f.types and f.types[0] == gguf.GGUFValueType.ARRAY and not include_arrays:
            continue
        out[key] = f.contents()
    return out


def read_config(reader: Any) -> LlamaConfig:
    arch = field_value(reader, "general.architecture")
    if arch != "llama":
        raise GGUFFormatError(f"general.architecture is {arch!r}, expected 'llama'")

    def need(key: str) -> Any:
        value = field_value(reader, f"llama.{key}")
        if value is None:
            raise GGUFFormatError(f"GGUF metadata has no llama.{key}")
        return value

    n_heads = int(need("attention.head_count"))
    d_model = int(need("embedding_length"))
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    vocab = field_value(reader, "llama.vocab_size")
    if vocab is None:
        vocab = len(tokens.data) if tokens is not None else 0
    head_dim = d_model // n_heads
    names = {t.name for t in reader.tensors}
    return LlamaConfig(
        n_layers=int(need("block_count")),
        d_model=d_model,
        n_heads=n_heads,
        n_kv_heads=int(field_value(reader, "llama.attention.head_count_kv", n_heads)),
        head_dim=head_dim,
        d_ffn=int(need("feed_forward_length")),
        vocab_size=int(vocab),
        context_length=int(field_value(reader, "llama.context_length", 0)),
        rope_theta=float(field_value(reader, "llama.rope.freq_base", 10000.0)),
        rope_dim=int(field_value(reader, "llama.rope.dimension_count", head_dim)),
        rms_eps=float(need("attention.layer_norm_rms_epsilon")),
        tied_embeddings="output.weight" not in names,
        name=str(field_value(reader, "general.name", "")),
    )


# --------------------------------------------------------------------------------------- tensors


def _dequantize(tensor: Any, f: Any) -> F32:
    """One GGUF tensor as a new float32 array in (out, in) order, read and dequantised in row chunks.

    The raw bytes are read from the open file `f` (at `tensor.data_offset`) rather than through the reader's
    memory map: touched pages of a map count in the process's RSS until it is unmapped, plain reads do not.
    """
    dequantize = optional_import("gguf.quants", "gguf==0.19.0").dequantize

    shape = tuple(int(n) for n in reversed(tensor.shape))  # GGUF lists ne0 (the fastest axis) first
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    row_bytes = int(tensor.n_bytes) // rows
    out = np.empty(shape, dtype=np.float32)
    flat = out.reshape(rows, shape[-1])
    f.seek(int(tensor.data_offset))
    for start in range(0, rows, _ROW_CHUNK):
        stop = min(start + _ROW_CHUNK, rows)
        raw = np.fromfile(f, dtype=np.uint8, count=(stop - start) * row_bytes)
        if raw.size != (stop - start) * row_bytes:
            raise GGUFFormatError(f"tensor {tensor.name}: the file ends inside its data")
        flat[start:stop] = dequantize(raw.reshape(stop - start, row_bytes), tensor.tensor_type)
    return out


def unpermute_rope_rows(w: F32, n_heads: int) -> F32:
    """Undo convert_hf_to_gguf's Q/K row permutation: interleaved-RoPE order → Hugging Face's rotate-half order.

    GGUF row 2i of a head came from HF row i, row 2i+1 from HF row i + head_dim/2.
    """
    rows, cols = w.shape
    half = rows // n_heads // 2
    return np.ascontiguousarray(w.reshape(n_heads, half, 2, cols).swapaxes(1, 2).reshape(rows, cols))


def open_gguf(path: str | Path) -> Any:
    """A `gguf.GGUFReader` on `path` (parsing the metadata takes a few seconds: share one reader)."""
    return _open(path)


def load_llama(path: str | Path, *, reader: Any = None) -> LlamaWeights:
    """Read and dequantise a Llama GGUF into `LlamaWeights` (float32; ~540 MB for SmolLM2-135M).

    `reader` (from `open_gguf(path)`) saves parsing the metadata again; its array fields (token list,
    merges) are dropped to save memory, so build the tokenizer from it first.
    """
    gguf = _gguf()
    reader = reader if reader is not None else _open(path)
    cfg = read_config(reader)
    tensors = {t.name: t for t in reader.tensors}
    metadata = {
        k: f.contents()
        for k, f in reader.fields.items()
        if not k.startswith("GGUF.") and f.types and f.types[0] != gguf.GGUFValueType.ARRAY
    }
    # The parsed token list and merges (~100k small arrays, ~100 MB) are not needed here: free them before
    # the ~540 MB of float32 weights are allocated (the tokenizer reads them itself).
    for key in [k for k, f in reader.fields.items() if f.types and f.types[0] == gguf.GGUFValueType.ARRAY]:
        del reader.fields[key]
    gc.collect()
    file = open(path, "rb")  # noqa: SIM115 - closed in the finally below

    def get(name: str, shape: tuple[int, ...]) -> F32:
        t = tensors.get(name)
        if t is None:
            raise GGUFFormatError(f"{path}: no tensor {name!r}")
        arr = _dequantize(t, file)
        if arr.shape != shape:
            raise GGUFFormatError(f"{path}: tensor {name} has shape {arr.shape}, expected {shape}")
        return arr

    try:
        d, hd = cfg.d_model, cfg.head_dim
        q_out, kv_out = cfg.n_heads * hd, cfg.n_kv_heads * hd
        layers = []
        for i in range(cfg.n_layers):
            p = f"blk.{i}."
            layers.append(
                LayerWeights(
                    attn_norm=get(p + "attn_norm.weight", (d,)),
                    w_q=get(p + "attn_q.weight", (q_out, d)),
                    w_k=get(p + "attn_k.weight", (kv_out, d)),
                    w_v=get(p + "attn_v.weight", (kv_out, d)),
                    w_o=get(p + "attn_output.weight", (d, q_out)),
                    ffn_norm=get(p + "ffn_norm.weight", (d,)),
                    w_gate=get(p + "ffn_gate.weight", (cfg.d_ffn, d)),
                    w_up=get(p + "ffn_up.weight", (cfg.d_ffn, d)),
                    w_down=get(p + "ffn_down.weight", (d, cfg.d_ffn)),
                )
            )
        embedding = get("token_embd.weight", (cfg.vocab_size, d))
        lm_head = embedding if cfg.tied_embeddings else get("output.weight", (cfg.vocab_size, d))
        weights = LlamaWeights(
            config=cfg,
            token_embedding=embedding,
            layers=layers,
            final_norm=get("output_norm.weight", (d,)),
            lm_head=lm_head,
            source=str(path),
            metadata=metadata,
        )
    finally:
        file.close()
    return weights  # the reader (and its memory map of the file) goes with this frame


__all__ = [
    "GGUFFormatError",
    "LayerWeights",
    "LlamaConfig",
    "LlamaWeights",
    "load_llama",
    "open_gguf",
    "read_config",
    "read_metadata",
    "unpermute_rope_rows",
]
