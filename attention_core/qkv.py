"""Where Q, K and V come from, in numbers small enough to check by hand (content/qkv-explained.md).

* `plane_projection(angle, scale)`: a 2 × 2 projection that turns a row vector by `angle` degrees
  (anticlockwise) and stretches it by `scale` — the knobs of the `qkv-projection` widget;
* `projection_state(X, …)`: one input X through two such projections, W_Q and W_K, into the scores
  QKᵀ/√d_k and their softmax rows (the attention itself is `core.attention_trace`);
* `pca_plane(points)`: an orthogonal projection onto the two directions that keep most of the points'
  squared length (uncentred, so dot products in the plane are those of the projected vectors);
* `kv_cache_bytes_per_token(…)`: what generation keeps per token — layers × 2 (K and V) × KV heads ×
  head_dim × bytes per number — and `PUBLISHED_CONFIGS`, the sizes of published models it is shown for.

NumPy only (this package also runs in the browser's Python).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .core import attention_trace

FloatArray = NDArray[np.float64]


def plane_projection(angle_degrees: float, scale: float) -> FloatArray:
    """W (2, 2) with x @ W = x turned anticlockwise by `angle_degrees` and multiplied by `scale` (row vectors,
    as everywhere in the course: Q = X W_Q)."""
    a = math.radians(angle_degrees)
    c, s = math.cos(a), math.sin(a)
    return scale * np.array([[c, s], [-s, c]], dtype=np.float64)


@dataclass(frozen=True)
class ProjectionState:
    """X (L, 2) through W_Q and W_K: Q, K, scores = QKᵀ/√d_k (d_k = 2) and each query row's softmax."""

    W_Q: FloatArray
    W_K: FloatArray
    Q: FloatArray
    K: FloatArray
    scores: FloatArray  # (L, L): [i, j] = q_i · k_j / √d_k, how much query i wants key j
    weights: FloatArray  # (L, L): softmax of each row

    def pair(self, i: int, j: int) -> tuple[float, float]:
        """(score of i looking at j, score of j looking at i): equal only when QKᵀ happens to be symmetric."""
        return float(self.scores[i, j]), float(self.scores[j, i])


def projection_state(X: ArrayLike, angle_q: float, scale_q: float, angle_k: float, scale_k: float) -> ProjectionState:
    """The widget's state, computed by the course's one attention implementation (V = X: only the scores matter)."""
    x = np.asarray(X, dtype=np.float64)
    w_q, w_k = plane_projection(angle_q, scale_q), plane_projection(angle_k, scale_k)
    trace = attention_trace(x, W_Q=w_q, W_K=w_k, W_V=np.eye(x.shape[-1]))
    return ProjectionState(w_q, w_k, trace.Q, trace.K, trace.scaled, trace.weights)


@dataclass(frozen=True)
class PcaPlane:
    coords: FloatArray  # (N, 2): each point's coordinates on the two directions
    basis: FloatArray  # (2, d): the directions (orthonormal rows)
    kept: float  # share of the points' total squared length the plane keeps, in [0, 1]


def pca_plane(points: ArrayLike) -> PcaPlane:
    """The best plane through the origin for `points` (N, d): the top two right singular vectors, uncentred
    (a centred PCA would move the origin, and a dot product is measured from the origin). Each direction's
    sign is fixed so that its largest-magnitude entry is positive: the same points always give the same picture."""
    p = np.asarray(points, dtype=np.float64)
    _, singular, vt = np.linalg.svd(p, full_matrices=False)
    basis = vt[:2].copy()
    for row in basis:
        if row[np.argmax(np.abs(row))] < 0:
            row *= -1
    total = float(np.sum(singular**2))
    kept = float(np.sum(singular[:2] ** 2) / total) if total > 0 else 1.0
    return PcaPlane(p @ basis.T, basis, kept)


def kv_cache_bytes_per_token(n_layers: int, n_kv_heads: int, head_dim: int, bytes_per_value: float) -> float:
    """What the KV cache grows by for each token: every layer keeps one key and one value vector (× 2) for each
    key/value head, head_dim numbers each."""
    for name, value in (("n_layers", n_layers), ("n_kv_heads", n_kv_heads), ("head_dim", head_dim)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"kv_cache_bytes_per_token: {name} must be a positive integer, got {value!r}")
    if not bytes_per_value > 0:
        raise ValueError(f"kv_cache_bytes_per_token: bytes_per_value must be positive, got {bytes_per_value!r}")
    return n_layers * 2 * n_kv_heads * head_dim * bytes_per_value


@dataclass(frozen=True)
class ModelShape:
    """The sizes that decide a model's KV cache (from its published configuration)."""

    name: str
    n_layers: int
    n_heads: int  # query heads
    n_kv_heads: int  # key/value heads (= n_heads without grouped-query attention)
    head_dim: int
    source: str  # where the numbers are published

    def bytes_per_token(self, bytes_per_value: float = 2) -> float:
        return kv_cache_bytes_per_token(self.n_layers, self.n_kv_heads, self.head_dim, bytes_per_value)


# Published configurations (Hugging Face config.json: num_hidden_layers, num_attention_heads,
# num_key_value_heads, hidden_size / num_attention_heads). SmolLM2-135M is not listed here: the build reads
# its sizes from the GGUF file it runs (attention_course/smollm2/inside.py `model_shape`).
PUBLISHED_CONFIGS: tuple[ModelShape, ...] = (
    ModelShape("Llama-2-7B", 32, 32, 32, 128, "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json"),
    ModelShape("Llama-3-8B", 32, 32, 8, 128, "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json"),
)

BYTES_PER_VALUE: dict[str, float] = {
    "float32": 4,
    "float16": 2,
    "int8": 1,
}  # float16 also stands for bfloat16 (2 bytes)


def shapes_by_name(shapes: Sequence[ModelShape]) -> dict[str, ModelShape]:
    return {s.name: s for s in shapes}


__all__ = [
    "BYTES_PER_VALUE",
    "ModelShape",
    "PUBLISHED_CONFIGS",
    "PcaPlane",
    "ProjectionState",
    "kv_cache_bytes_per_token",
    "pca_plane",
    "plane_projection",
    "projection_state",
    "shapes_by_name",
]


# ------------------------------------------------------------------ the designed example of the widget

PLANE_TOKENS: tuple[str, ...] = ("猫", "追", "老鼠")
"""A designed three-word sentence with 2-D embeddings (for reading the picture, not from a model)."""
PLANE_X: tuple[tuple[float, float], ...] = ((1.0, 0.4), (0.1, 1.0), (0.8, -0.7))

__all__ += ["PLANE_TOKENS", "PLANE_X"]
