"""Positional information for a Transformer: the sinusoidal encoding of "Attention Is All You Need" (Vaswani et
al. 2017, §3.5) and the dot products between positions that show why it encodes *relative* offsets.

    PE[p, 2i]   = sin(p / base^(2i/d))
    PE[p, 2i+1] = cos(p / base^(2i/d))        (base = 10000 in the paper)

Pair i turns at the angular frequency ω_i = base^(−2i/d): the first pairs change every position, the last ones
hardly at all over a sentence.  Because sin·sin + cos·cos = cos(difference), PE[p] · PE[q] = Σ_i cos((p − q)·ω_i):
it depends only on the offset p − q, never on where the pair of positions sits.  RoPE (Su et al. 2021) uses the
same frequencies, but rotates the queries and keys by them instead of adding a vector to the input.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def sinusoidal_frequencies(d_model: int, base: float = 10000.0) -> FloatArray:
    """ω_i = base^(−2i/d) for i = 0 … d/2 − 1: the angle (radians) pair i turns per position."""
    if not isinstance(d_model, int) or isinstance(d_model, bool) or d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be an even integer ≥ 2, got {d_model!r}")
    if not base > 1:
        raise ValueError(f"base must be > 1, got {base!r}")
    return base ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)


def sinusoidal_encoding(n_positions: int, d_model: int, base: float = 10000.0) -> FloatArray:
    """(n_positions, d_model): row p is position p's vector; even columns sin, odd columns cos (interleaved as in
    the paper's formula)."""
    if not isinstance(n_positions, int) or isinstance(n_positions, bool) or n_positions < 1:
        raise ValueError(f"n_positions must be a positive integer, got {n_positions!r}")
    angles = np.outer(np.arange(n_positions, dtype=np.float64), sinusoidal_frequencies(d_model, base))
    pe = np.empty((n_positions, d_model), dtype=np.float64)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def position_similarity(pe: NDArray) -> FloatArray:
    """Cosine similarity between every two positions' vectors, (n, n). Every sinusoidal vector has the same length
    (√(d/2): each pair contributes sin² + cos² = 1), so this is the dot product divided by d/2."""
    pe = np.asarray(pe, dtype=np.float64)
    norms = np.linalg.norm(pe, axis=1)
    return (pe @ pe.T) / np.outer(norms, norms)


def offset_similarity(n_offsets: int, d_model: int, base: float = 10000.0) -> FloatArray:
    """The similarity of two positions `k` apart, k = 0 … n_offsets − 1, in closed form: mean_i cos(k·ω_i).
    Equal to every diagonal of `position_similarity(sinusoidal_encoding(…))` (the tests check)."""
    k = np.arange(n_offsets, dtype=np.float64)
    return np.cos(np.outer(k, sinusoidal_frequencies(d_model, base))).mean(axis=1)


__all__ = ["offset_similarity", "position_similarity", "sinusoidal_encoding", "sinusoidal_frequencies"]
