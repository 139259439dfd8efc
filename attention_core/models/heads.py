"""What does each attention head do?  Four simple scores per (layer, head), measured on real inputs.

All scores are averages of attention weights, so each lies in [0, 1]: 1 means "the head puts all of its
attention there, at every position measured", and a head with uniform attention over T keys scores
about 1/T.  `A[i, j]` below is the weight from query position i to key position j of one head (rows sum
to 1; causal, so j ≤ i).

* previous token — mean over i = 2 … T−1 of A[i, i−1].
  Starts at 2 so that the previous token is never the first one (which `first token` measures).
* first token ("attention sink") — mean over i = 1 … T−1 of A[i, 0].
  Row 0 is left out: it can only attend to itself.  Many heads park the attention they do not need on
  the first token, whatever it is (Xiao et al. 2023, "attention sinks").
* self / same token — mean over i = 1 … T−1 of A[i, i].
* induction — on `n_sequences` sequences, each n random distinct tokens followed by the same n tokens
  again (length 2n): mean over the second copy's positions i = n + k, k = 0 … n−2, of A[i, k + 1], the
  weight on the token that *followed the earlier occurrence* of the current token.  A head that does
  "I saw … A B … before, now I see A, so look at B" (Olsson et al. 2022) scores high; random tokens make
  sure nothing but the repetition can predict B.

The first three come from any text's forward pass (`pattern_scores`); induction needs its own input
(`induction_scores`).  `score_heads` does both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .gguf_reader import LlamaWeights
from .llama import forward

F32 = NDArray[np.float32]

SCORE_NAMES = ("previous_token", "first_token", "self_token", "induction")

# A plain English paragraph for the pattern scores (any ordinary text works; this is fixed so results are
# reproducible).
DEFAULT_TEXT = (
    "When the train finally arrived, the small station was almost empty. An old man with a grey coat "
    "stepped onto the platform, looked at the clock above the door, and walked slowly towards the town. "
    "Nobody noticed him, but the dog that slept under the bench lifted its head and followed him."
)


@dataclass
class HeadScores:
    """Scores of shape (n_layers, n_heads) for each behaviour (see the module docstring)."""

    previous_token: F32
    first_token: F32
    self_token: F32
    induction: F32

    def get(self, name: str) -> F32:
        if name not in SCORE_NAMES:
            raise KeyError(f"unknown score {name!r}; one of {SCORE_NAMES}")
        return getattr(self, name)

    def best(self, name: str, k: int = 5) -> list[tuple[int, int, float]]:
        """The k highest-scoring heads for `name`, as (layer, head, score), best first."""
        s = self.get(name)
        order = np.argsort(-s, axis=None, kind="stable")[:k]
        return [(int(i // s.shape[1]), int(i % s.shape[1]), float(s.flat[i])) for i in order]


def pattern_scores(attention: F32) -> dict[str, F32]:
    """previous_token, first_token and self_token scores from attention weights (L, H, T, T), T ≥ 3."""
    t = attention.shape[-1]
    if attention.ndim != 4 or attention.shape[-2] != t or t < 3:
        raise ValueError(
            f"pattern_scores: need attention of shape (layers, heads, T, T) with T >= 3, got {attention.shape}"
        )
    i = np.arange(t)
    return {
        "previous_token": attention[:, :, i[2:], i[2:] - 1].mean(axis=-1),
        "first_token": attention[:, :, 1:, 0].mean(axis=-1),
        "self_token": attention[:, :, i[1:], i[1:]].mean(axis=-1),
    }


def repeated_random_tokens(n: int, *, seed: int = 0, low: int = 1000, high: int = 10000) -> list[int]:
    """n distinct random token ids in [low, high), then the same n again (ids below 17 are control tokens;
    the default range holds ordinary word pieces)."""
    if not 2 <= n <= high - low:
        raise ValueError(f"repeated_random_tokens: need 2 <= n <= {high - low}, got {n}")
    first = np.random.default_rng(seed).choice(np.arange(low, high), size=n, replace=False)
    return [int(x) for x in first] * 2


def induction_scores(weights: LlamaWeights, *, n: int = 25, n_sequences: int = 4, seed: int = 0) -> F32:
    """Induction score of every head, averaged over `n_sequences` repeated random sequences of length 2n."""
    total = np.zeros((weights.config.n_layers, weights.config.n_heads), dtype=np.float64)
    k = np.arange(n - 1)
    for s in range(n_sequences):
        attention = forward(weights, repeated_random_tokens(n, seed=seed + s)).attention
        total += attention[:, :, n + k, k + 1].mean(axis=-1)
    return (total / n_sequences).astype(np.float32)


def score_heads(
    weights: LlamaWeights, text_tokens: Sequence[int], *, n: int = 25, n_sequences: int = 4, seed: int = 0
) -> HeadScores:
    """All four scores: the pattern scores on `text_tokens` (e.g. `tokenizer.encode(DEFAULT_TEXT)`),
    induction on repeated random tokens."""
    patterns = pattern_scores(forward(weights, text_tokens).attention)
    return HeadScores(**patterns, induction=induction_scores(weights, n=n, n_sequences=n_sequences, seed=seed))


__all__ = [
    "DEFAULT_TEXT",
    "SCORE_NAMES",
    "HeadScores",
    "induction_scores",
    "pattern_scores",
    "repeated_random_tokens",
    "score_heads",
]
