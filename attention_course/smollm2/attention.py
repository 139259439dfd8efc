"""Attention as the reader sees it: every layer's and head's weights for a sentence, and the head gallery.

Attention weights leave here quantised as whole percentages that sum to exactly 100 in every row (largest
remainder), because that is what the reader sees: a row of a heatmap that says 加起来是 100%.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

import numpy as np

from builder.model import BuildOptions

from .store import cached_result, check_text, loaded_model, model_path


@dataclass(frozen=True)
class SentenceRun:
    """One sentence through the model: its tokens as the reader sees them and every layer's and head's causal
    attention as whole percentages, packed row by row (row i has i + 1 entries) per (layer, head)."""

    text: str
    tokens: list[str]
    n_layers: int
    n_heads: int
    percents: bytes  # uint8, n_layers · n_heads · T(T+1)/2
    mean_percents: bytes  # uint8, n_layers · T(T+1)/2: each layer's heads averaged (then rounded the same way)

    @property
    def length(self) -> int:
        return len(self.tokens)

    def matrix(self, layer: int, head: int) -> list[list[int]]:
        """The (T, T) percentages of one head, zeros above the diagonal."""
        return self._unpack(self.percents, layer * self.n_heads + head)

    def mean_matrix(self, layer: int) -> list[list[int]]:
        """The (T, T) percentages of the average of a layer's heads."""
        return self._unpack(self.mean_percents, layer)

    def _unpack(self, packed: bytes, index: int) -> list[list[int]]:
        t = self.length
        per_head = t * (t + 1) // 2
        flat = packed[index * per_head : (index + 1) * per_head]
        rows, at = [], 0
        for i in range(t):
            rows.append(list(flat[at : at + i + 1]) + [0] * (t - i - 1))
            at += i + 1
        return rows

    def packed_base64(self) -> str:
        return base64.b64encode(self.percents).decode("ascii")

    def packed_mean_base64(self) -> str:
        return base64.b64encode(self.mean_percents).decode("ascii")


def largest_remainder_percents(weights: np.ndarray) -> np.ndarray:
    """Whole percentages of each row of `weights` (N, T) (rows sum to 1) that sum to exactly 100: floor every
    entry, then give the missing points to the entries with the largest remainders (ties: the earlier key).
    A masked weight (0) never gets a point: the remainders of a row add up to the points it misses."""
    scaled = np.asarray(weights, dtype=np.float64) * 100.0
    floor = np.floor(scaled)
    missing = np.rint(100.0 - floor.sum(axis=1)).astype(np.int64)
    order = np.argsort(-(scaled - floor), axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(scaled.shape[1]), order.shape), axis=1)
    return (floor + (rank < missing[:, None])).astype(np.int64)


def sentence_run(options: BuildOptions, text: str) -> SentenceRun:
    """`text` through SmolLM2-135M (cached): raises ModelInputError for an empty or too long sentence."""
    check_text(options, text, fits="fit a readable heatmap")

    def compute() -> SentenceRun:
        model = loaded_model(options)
        result = model.run(text)
        n_layers, n_heads, t, _ = result.attention.shape
        lower = np.tril_indices(t)
        rows = largest_remainder_percents(result.attention.reshape(-1, t)).reshape(n_layers, n_heads, t, t)
        mean = largest_remainder_percents(result.attention.mean(axis=1).reshape(-1, t)).reshape(n_layers, t, t)
        return SentenceRun(
            text,
            model.tokenizer.token_strings(result.tokens),
            n_layers,
            n_heads,
            rows[:, :, lower[0], lower[1]].astype(np.uint8).tobytes(),
            mean[:, lower[0], lower[1]].astype(np.uint8).tobytes(),
        )

    return cached_result(options, compute, "model-sentence", text)


@dataclass(frozen=True)
class GalleryEntry:
    pattern: str  # one of attention_core.models.heads.SCORE_NAMES
    layer: int
    head: int
    score: float  # the head's score for the pattern, in [0, 1]
    runner_up: tuple[int, int, float]  # the second-best head
    median: float  # the median score over all heads: what "specialised" is compared with


def head_gallery(options: BuildOptions) -> list[GalleryEntry]:
    """The best head for each pattern, scored on real data (attention_core.models.heads.score_heads)."""
    model_path(options)

    def compute() -> list[GalleryEntry]:
        from attention_core.models import heads

        model = loaded_model(options)
        scores = heads.score_heads(model.weights, model.encode(heads.DEFAULT_TEXT))
        entries = []
        for name in heads.SCORE_NAMES:
            table = scores.get(name)
            (l1, h1, s1), (l2, h2, s2) = scores.best(name, k=2)
            entries.append(
                GalleryEntry(name, int(l1), int(h1), float(s1), (int(l2), int(h2), float(s2)), float(np.median(table)))
            )
        return entries

    return cached_result(options, compute, "model-head-gallery")
