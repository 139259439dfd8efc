"""A real model's numbers for the widgets: SmolLM2-135M (attention_core.models) run in NumPy at build time.

Every result is cached by the model file's sha256, the code that computes it and its inputs (`store`), so the
model (≈ 5 s to read and dequantise, ≈ 650 MB while it is held) is loaded only when an input is new, and at most
once per process. One module per kind of result:

- `attention`: every layer's and head's attention for a sentence (model-attention), the head gallery;
- `inside`: the model's sizes, one layer's queries and keys, the SwiGLU gates;
- `generation`: next-token distributions and the logit lens, continuation trees.
"""

from .attention import GalleryEntry, SentenceRun, head_gallery, largest_remainder_percents, sentence_run
from .generation import (
    ContinuationNode,
    ContinuationTree,
    NextTokenRun,
    continuation_tree,
    next_token_run,
    temperature_probs,
)
from .inside import GateStats, ModelShape, QueryKeyRun, ffn_gate_stats, model_config, model_shape, query_key_run
from .store import MAX_TOKENS, RUNS, ModelInputError, count_tokens, digest_of, model_path

__all__ = [
    "MAX_TOKENS",
    "RUNS",
    "ContinuationNode",
    "ContinuationTree",
    "GalleryEntry",
    "GateStats",
    "ModelInputError",
    "ModelShape",
    "NextTokenRun",
    "QueryKeyRun",
    "SentenceRun",
    "continuation_tree",
    "count_tokens",
    "digest_of",
    "ffn_gate_stats",
    "head_gallery",
    "largest_remainder_percents",
    "model_config",
    "model_path",
    "model_shape",
    "next_token_run",
    "query_key_run",
    "sentence_run",
    "temperature_probs",
]
