"""Core attention maths: softmax, masks, scaled dot-product and multi-head attention.

Pure NumPy, no I/O.  The same source runs in CPython at build time and in Pyodide
(Python 3.12, numpy 2.0) in the browser, so only stdlib + numpy APIs available in
numpy 2.0 are used.

Shape conventions (``...`` = optional leading batch / head dimensions):

* ``Q``: ``(..., L_q, d_k)``, ``K``: ``(..., L_k, d_k)``, ``V``: ``(..., L_k, d_v)``
* scores / weights: ``(..., L_q, L_k)``; row ``i`` = how query ``i`` distributes
  its attention over the keys.
* masks are boolean "allowed" arrays: ``True`` = query may attend to this key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "AttentionTrace",
    "MultiHeadTrace",
    "attention_trace",
    "causal_mask",
    "multi_head_attention",
    "multi_head_trace",
    "scaled_dot_product_attention",
    "softmax",
]

FloatArray = NDArray[np.floating[Any]]


# --------------------------------------------------------------------------- helpers


def _as_float_array(x: ArrayLike, name: str) -> FloatArray:
    """Convert to a floating array (ints/bools -> float64); reject non-numeric input."""
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:  # ragged lists etc.
        raise ValueError(f"{name} must be a numeric array: {exc}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_)):
        raise ValueError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be real-valued, got dtype {arr.dtype}")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    return arr


def _check_finite(arr: FloatArray, name: str) -> None:
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if np.isinf(arr).any():
        raise ValueError(f"{name} contains inf; attention inputs must be finite")


def _check_temperature(temperature: float) -> float:
    if isinstance(temperature, (bool, np.bool_)):
        raise ValueError("temperature must be a positive finite number, got a bool")
    try:
        t = float(temperature)
    except (TypeError, ValueError):
        raise ValueError(f"temperature must be a positive finite number, got {temperature!r}") from None
    if not math.isfinite(t) or t <= 0.0:
        raise ValueError(f"temperature must be a positive finite number, got {t!r}")
    return t


def _as_mask(mask: ArrayLike, shape: tuple[int, ...]) -> NDArray[np.bool_]:
    """Validate a boolean 'allowed' mask and broadcast it to ``shape``."""
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise ValueError(
            "mask must be a boolean array (True = attention allowed), "
            f"got dtype {m.dtype}; use e.g. causal_mask(n) or `scores_mask.astype(bool)`"
        )
    try:
        return np.broadcast_to(m, shape)
    except ValueError:
        raise ValueError(f"mask of shape {m.shape} is not broadcastable to scores of shape {shape}") from None


def _to_jsonable(value: Any, decimals: int | None, json_safe: bool) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype == np.bool_:
            return value.tolist()
        arr = value.astype(np.float64)
        if decimals is not None:
            arr = np.round(arr, decimals)
        out = arr.tolist()
        if json_safe and not np.isfinite(arr).all():
            out = _replace_nonfinite(out)
        return out
    if isinstance(value, (np.floating, float)):
        v = float(value)
        if decimals is not None:
            v = round(v, decimals)
        return v if (math.isfinite(v) or not json_safe) else None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, tuple):
        return [_to_jsonable(v, decimals, json_safe) for v in value]
    return value


def _replace_nonfinite(obj: Any) -> Any:
    if isinstance(obj, list):
        return [_replace_nonfinite(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


class _ToDictMixin:
    def to_dict(self, decimals: int | None = None, json_safe: bool = True) -> dict[str, Any]:
        """Return a dict of plain Python values (arrays -> nested lists).

        ``decimals`` rounds floats; with ``json_safe`` (default) non-finite floats
        (the ``-inf`` of masked scores) become ``None`` so the result is strict JSON.
        """
        return {
            f.name: _to_jsonable(getattr(self, f.name), decimals, json_safe)
            for f in fields(self)  # type: ignore[arg-type]
        }


# --------------------------------------------------------------------------- softmax


def softmax(x: ArrayLike, temperature: float = 1.0, axis: int = -1) -> FloatArray:
    """Numerically stable softmax of ``x / temperature`` along ``axis``.

    Computed as ``exp((x - max) / T) / sum(...)`` so huge inputs (e.g. ``1e308``)
    do not overflow.  ``-inf`` entries get weight exactly ``0.0`` (this is how masks
    work).  ``+inf`` entries are treated as the limit: the ``+inf`` entries of a slice
    share its weight equally.

    Args:
        x: scores, any shape; ints are converted to float64.
        temperature: ``T > 0`` and finite.  ``T -> 0`` approaches one-hot (argmax),
            ``T -> inf`` approaches uniform.
        axis: the axis that sums to 1.

    Returns:
        Array of the same shape as ``x`` whose slices along ``axis`` sum to 1.

    Raises:
        ValueError: NaN in ``x``; a slice that is entirely ``-inf`` (nothing to
            attend to); an empty axis; a non-positive or non-finite temperature.
    """
    t = _check_temperature(temperature)
    arr = _as_float_array(x, "softmax input")
    if arr.ndim == 0:
        raise ValueError("softmax input must have at least one dimension")
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"axis {axis} is out of bounds for input with {arr.ndim} dims")
    axis = axis % arr.ndim
    if arr.shape[axis] == 0:
        raise ValueError("softmax over an empty axis is undefined")
    if np.isnan(arr).any():
        raise ValueError("softmax input contains NaN")

    m = np.max(arr, axis=axis, keepdims=True)
    if np.isneginf(m).any():
        raise ValueError(
            "softmax: a slice along the axis is entirely -inf (e.g. a fully masked "
            "attention row); there is nothing to attend to"
        )
    with np.errstate(invalid="ignore", over="ignore"):
        shifted = arr - m  # <= 0 everywhere (or -inf); inf-inf handled below
        pos_inf_row = np.isposinf(m)
        if pos_inf_row.any():
            shifted = np.where(pos_inf_row, np.where(np.isposinf(arr), 0.0, -np.inf), shifted)
        e = np.exp(shifted / t)
    return e / np.sum(e, axis=axis, keepdims=True)


# --------------------------------------------------------------------------- masks


def causal_mask(n: int) -> NDArray[np.bool_]:
    """Boolean ``(n, n)`` mask, ``True`` where attention is allowed (key ``j <= i``).

    Row ``i`` is the query position: it may look at itself and everything before it.
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"causal_mask: n must be a non-negative int, got {n!r}")
    if n < 0:
        raise ValueError(f"causal_mask: n must be a non-negative int, got {n}")
    return np.tril(np.ones((int(n), int(n)), dtype=bool))


# --------------------------------------------------------------------------- single head


def _check_qkv(Q: ArrayLike, K: ArrayLike, V: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    q = _as_float_array(Q, "Q")
    k = _as_float_array(K, "K")
    v = _as_float_array(V, "V")
    for name, a in (("Q", q), ("K", k), ("V", v)):
        if a.ndim < 2:
            raise ValueError(f"{name} must have shape (..., L, d) with at least 2 dims, got shape {a.shape}")
        _check_finite(a, name)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"Q and K must have the same last dimension d_k, got Q {q.shape} and K {k.shape}")
    if q.shape[-1] == 0:
        raise ValueError("d_k must be at least 1")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"K and V must have the same number of keys L_k, got K {k.shape} and V {v.shape}")
    try:
        np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"leading (batch/head) dimensions of Q, K, V are not broadcastable: Q {q.shape}, K {k.shape}, V {v.shape}"
        ) from None
    return q, k, v


def _attention_steps(
    q: FloatArray,
    k: FloatArray,
    v: FloatArray,
    mask: ArrayLike | None,
    temperature: float,
) -> tuple[FloatArray, FloatArray, FloatArray, NDArray[np.bool_] | None, FloatArray, FloatArray]:
    """scores, scaled, masked, broadcast mask, weights, output (inputs already validated)."""
    t = _check_temperature(temperature)
    d_k = q.shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):
        scores = q @ np.swapaxes(k, -1, -2)
    if not np.isfinite(scores).all():
        raise ValueError("Q·Kᵀ overflowed (non-finite scores); the inputs are too large in magnitude")
    scaled = scores / math.sqrt(d_k)
    m: NDArray[np.bool_] | None = None
    if mask is None:
        masked = scaled.copy()
    else:
        m = _as_mask(mask, scaled.shape)
        empty = ~m.any(axis=-1)
        if scaled.shape[-1] > 0 and empty.any():
            rows = np.argwhere(empty)[:, -1]
            raise ValueError(
                "mask disallows every key for query row(s) "
                f"{sorted(set(int(r) for r in rows))}; each query needs at least one allowed key"
            )
        masked = np.where(m, scaled, -np.inf)
    if masked.shape[-1] == 0:
        raise ValueError("attention needs at least one key (L_k >= 1)")
    weights = softmax(masked, temperature=t, axis=-1)
    if m is not None:
        weights = np.where(m, weights, 0.0)  # already exact 0; make it explicit
    output = weights @ v
    if not np.isfinite(output).all():
        raise ValueError("attention output overflowed; V is too large in magnitude")
    return scores, scaled, masked, m, weights, output


def scaled_dot_product_attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    mask: ArrayLike | None = None,
    temperature: float = 1.0,
) -> tuple[FloatArray, FloatArray]:
    """``softmax(Q Kᵀ / sqrt(d_k) / T) V`` with an optional boolean mask.

    Args:
        Q: ``(..., L_q, d_k)`` queries.
        K: ``(..., L_k, d_k)`` keys.
        V: ``(..., L_k, d_v)`` values.  Leading dims of Q/K/V broadcast.
        mask: boolean, broadcastable to ``(..., L_q, L_k)``; ``True`` = allowed.
            Disallowed entries get weight exactly ``0.0``.
        temperature: ``T > 0``; divides the scaled scores before the softmax.

    Returns:
        ``(output, weights)`` with shapes ``(..., L_q, d_v)`` and ``(..., L_q, L_k)``.

    Raises:
        ValueError: mismatched shapes, non-finite inputs, a non-boolean mask, a query
            row whose keys are all masked, or a bad temperature.
    """
    q, k, v = _check_qkv(Q, K, V)
    _, _, _, _, weights, output = _attention_steps(q, k, v, mask, temperature)
    return output, weights


@dataclass(frozen=True)
class AttentionTrace(_ToDictMixin):
    """Every intermediate of one attention head (for the step-by-step calculator).

    Shapes for unbatched input of ``L`` tokens: ``X (L, d_model)`` or ``None``,
    ``Q (L, d_k)``, ``K (L, d_k)``, ``V (L, d_v)``, ``scores/scaled/masked/weights
    (L, L)``, ``output (L, d_v)``.
    """

    X: FloatArray | None
    Q: FloatArray
    K: FloatArray
    V: FloatArray
    scores: FloatArray  #: Q · Kᵀ
    scaled: FloatArray  #: scores / sqrt(d_k)
    masked: FloatArray  #: scaled with -inf where the mask forbids attention
    weights: FloatArray  #: softmax(masked / temperature), rows sum to 1
    output: FloatArray  #: weights · V
    d_k: int
    temperature: float
    mask: NDArray[np.bool_] | None  #: the mask broadcast to the scores' shape, or None


def attention_trace(
    X: ArrayLike | None = None,
    *,
    Q: ArrayLike | None = None,
    K: ArrayLike | None = None,
    V: ArrayLike | None = None,
    W_Q: ArrayLike | None = None,
    W_K: ArrayLike | None = None,
    W_V: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    temperature: float = 1.0,
) -> AttentionTrace:
    """Run one attention head and keep every intermediate.

    Either pass ``X (..., L, d_model)`` with ``W_Q, W_K (d_model, d_k)`` and
    ``W_V (d_model, d_v)`` (then ``Q = X W_Q`` etc.), or pass ``Q, K, V`` directly.

    Returns:
        :class:`AttentionTrace`.
    """
    projections = (W_Q, W_K, W_V)
    direct = (Q, K, V)
    if X is not None:
        if any(a is not None for a in direct):
            raise ValueError("attention_trace: pass either X with W_Q/W_K/W_V, or Q/K/V, not both")
        if any(w is None for w in projections):
            raise ValueError("attention_trace: X requires all of W_Q, W_K and W_V")
        x = _as_float_array(X, "X")
        if x.ndim < 2:
            raise ValueError(f"X must have shape (..., L, d_model), got shape {x.shape}")
        _check_finite(x, "X")
        ws = []
        for name, w in zip(("W_Q", "W_K", "W_V"), projections):
            wa = _as_float_array(w, name)
            if wa.ndim != 2 or wa.shape[0] != x.shape[-1]:
                raise ValueError(f"{name} must have shape (d_model={x.shape[-1]}, d), got shape {wa.shape}")
            _check_finite(wa, name)
            ws.append(wa)
        q, k, v = _check_qkv(x @ ws[0], x @ ws[1], x @ ws[2])
    else:
        if any(a is None for a in direct):
            raise ValueError("attention_trace: pass X with W_Q/W_K/W_V, or all of Q, K and V")
        if any(w is not None for w in projections):
            raise ValueError("attention_trace: W_Q/W_K/W_V are only used together with X")
        x = None
        q, k, v = _check_qkv(Q, K, V)  # type: ignore[arg-type]
    t = _check_temperature(temperature)
    scores, scaled, masked, m, weights, output = _attention_steps(q, k, v, mask, t)
    return AttentionTrace(
        X=x,
        Q=q,
        K=k,
        V=v,
        scores=scores,
        scaled=scaled,
        masked=masked,
        weights=weights,
        output=output,
        d_k=int(q.shape[-1]),
        temperature=t,
        mask=None if m is None else np.array(m),
    )


# --------------------------------------------------------------------------- multi-head


@dataclass(frozen=True)
class MultiHeadTrace(_ToDictMixin):
    """Intermediates of multi-head attention (unbatched shapes shown, h = num_heads).

    ``Q, K (h, L, d_k)``, ``V (h, L, d_v)``, ``scaled (h, L, L)`` (Q Kᵀ / sqrt(d_k),
    before masking), ``weights (h, L, L)``, ``head_outputs (h, L, d_v)``,
    ``concat (L, h*d_v)`` (head outputs side by side), ``output (L, d_out)``
    (``concat W_O``; equals ``concat`` when ``W_O`` is None).
    """

    X: FloatArray
    Q: FloatArray
    K: FloatArray
    V: FloatArray
    scaled: FloatArray
    weights: FloatArray
    head_outputs: FloatArray
    concat: FloatArray
    output: FloatArray
    num_heads: int
    d_k: int
    d_v: int


def _split_heads(a: FloatArray, num_heads: int) -> FloatArray:
    """``(..., L, h*d) -> (..., h, L, d)``."""
    *lead, L, width = a.shape
    return np.swapaxes(a.reshape(*lead, L, num_heads, width // num_heads), -2, -3)


def _merge_heads(a: FloatArray) -> FloatArray:
    """``(..., h, L, d) -> (..., L, h*d)``."""
    *lead, h, L, d = a.shape
    return np.swapaxes(a, -2, -3).reshape(*lead, L, h * d)


def _multi_head(
    X: ArrayLike,
    W_Q: ArrayLike,
    W_K: ArrayLike,
    W_V: ArrayLike,
    W_O: ArrayLike | None,
    num_heads: int,
    mask: ArrayLike | None,
    temperature: float,
) -> MultiHeadTrace:
    if isinstance(num_heads, (bool, np.bool_)) or not isinstance(num_heads, (int, np.integer)):
        raise ValueError(f"num_heads must be a positive int, got {num_heads!r}")
    if num_heads < 1:
        raise ValueError(f"num_heads must be a positive int, got {num_heads}")
    h = int(num_heads)
    x = _as_float_array(X, "X")
    if x.ndim < 2:
        raise ValueError(f"X must have shape (..., L, d_model), got shape {x.shape}")
    _check_finite(x, "X")
    d_model = x.shape[-1]
    ws: dict[str, FloatArray] = {}
    for name, w in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        wa = _as_float_array(w, name)
        if wa.ndim != 2 or wa.shape[0] != d_model:
            raise ValueError(f"{name} must have shape (d_model={d_model}, num_heads*d_head), got shape {wa.shape}")
        _check_finite(wa, name)
        if wa.shape[1] % h != 0:
            raise ValueError(f"{name} width {wa.shape[1]} (d_model={d_model}) must be divisible by num_heads={h}")
        ws[name] = wa
    if ws["W_Q"].shape[1] != ws["W_K"].shape[1]:
        raise ValueError(f"W_Q and W_K must have the same width, got {ws['W_Q'].shape} and {ws['W_K'].shape}")
    if ws["W_Q"].shape[1] == 0:
        raise ValueError("projection width must be at least num_heads")
    q = _split_heads(x @ ws["W_Q"], h)
    k = _split_heads(x @ ws["W_K"], h)
    v = _split_heads(x @ ws["W_V"], h)
    q, k, v = _check_qkv(q, k, v)
    _, scaled, _, _, weights, head_out = _attention_steps(q, k, v, mask, temperature)
    concat = _merge_heads(head_out)
    if W_O is None:
        out = concat
    else:
        wo = _as_float_array(W_O, "W_O")
        if wo.ndim != 2 or wo.shape[0] != concat.shape[-1]:
            raise ValueError(f"W_O must have shape (num_heads*d_v={concat.shape[-1]}, d_out), got shape {wo.shape}")
        _check_finite(wo, "W_O")
        out = concat @ wo
    return MultiHeadTrace(
        X=x,
        Q=q,
        K=k,
        V=v,
        scaled=scaled,
        weights=weights,
        head_outputs=head_out,
        concat=concat,
        output=out,
        num_heads=h,
        d_k=int(q.shape[-1]),
        d_v=int(v.shape[-1]),
    )


def multi_head_attention(
    X: ArrayLike,
    W_Q: ArrayLike,
    W_K: ArrayLike,
    W_V: ArrayLike,
    W_O: ArrayLike | None,
    num_heads: int,
    mask: ArrayLike | None = None,
    temperature: float = 1.0,
) -> tuple[FloatArray, FloatArray]:
    """Multi-head self-attention, vectorised over heads (no Python loop).

    ``Q = X W_Q`` is split column-wise into ``num_heads`` blocks of ``d_k`` columns
    (head ``i`` uses columns ``i*d_k:(i+1)*d_k``); same for K and V.  Each head runs
    :func:`scaled_dot_product_attention`; the head outputs are concatenated in head
    order and multiplied by ``W_O``.

    Args:
        X: ``(..., L, d_model)``.
        W_Q, W_K: ``(d_model, num_heads*d_k)`` (usually ``d_model x d_model``).
        W_V: ``(d_model, num_heads*d_v)``.
        W_O: ``(num_heads*d_v, d_out)``, or ``None`` to return the concatenation.
        num_heads: the projection widths (d_model) must be divisible by it.
        mask: boolean, broadcastable to ``(L, L)`` (shared by all heads) or to
            ``(..., num_heads, L, L)``.
        temperature: ``T > 0`` applied in every head's softmax.

    Returns:
        ``(output, weights)``: ``(..., L, d_out)`` and ``(..., num_heads, L, L)``.
    """
    tr = _multi_head(X, W_Q, W_K, W_V, W_O, num_heads, mask, temperature)
    return tr.output, tr.weights


def multi_head_trace(
    X: ArrayLike,
    W_Q: ArrayLike,
    W_K: ArrayLike,
    W_V: ArrayLike,
    W_O: ArrayLike | None,
    num_heads: int,
    mask: ArrayLike | None = None,
    temperature: float = 1.0,
) -> MultiHeadTrace:
    """Same as :func:`multi_head_attention` but returns a :class:`MultiHeadTrace`
    with per-head Q/K/V, weights and outputs, the concatenation and the final output."""
    return _multi_head(X, W_Q, W_K, W_V, W_O, num_heads, mask, temperature)
