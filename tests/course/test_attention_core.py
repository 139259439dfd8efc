"""Unit tests for attention_core.core: hand-computed cases, properties, edge cases."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from attention_core import (
    AttentionTrace,
    MultiHeadTrace,
    attention_trace,
    causal_mask,
    multi_head_attention,
    multi_head_trace,
    scaled_dot_product_attention,
    softmax,
)

# Any RuntimeWarning (overflow, invalid value, ...) is a test failure.
# NumPy numeric warnings (overflow, invalid value) are failures; unrelated warnings (e.g. a ResourceWarning
# raised while another test's objects are garbage-collected) are not this module's concern.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

SEEDS = range(5)


def _naive_softmax_row(row: list[float]) -> list[float]:
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = sum(e)
    return [v / s for v in e]


def _random_mask(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Random boolean mask where every row keeps at least one allowed key."""
    m = rng.random(shape) < 0.5
    idx = rng.integers(0, shape[-1], size=shape[:-1])
    np.put_along_axis(m, idx[..., None], True, axis=-1)
    return m


# =========================================================================== softmax


class TestSoftmaxHandComputed:
    def test_zero_and_ln2_gives_one_third_two_thirds(self):
        np.testing.assert_allclose(softmax([0.0, math.log(2)]), [1 / 3, 2 / 3], rtol=1e-15)

    def test_equal_scores_are_uniform(self):
        np.testing.assert_array_equal(softmax([5.0, 5.0, 5.0, 5.0]), [0.25] * 4)

    def test_one_two_three(self):
        e = [math.e, math.e**2, math.e**3]
        expected = [v / sum(e) for v in e]
        np.testing.assert_allclose(softmax([1, 2, 3]), expected, rtol=1e-14)

    def test_temperature_two_on_zero_ln4(self):
        # [0, ln 4] / 2 = [0, ln 2]  ->  [1/3, 2/3]
        np.testing.assert_allclose(softmax([0.0, math.log(4)], temperature=2.0), [1 / 3, 2 / 3], rtol=1e-15)

    def test_matches_pure_python_reference(self):
        rng = np.random.default_rng(0)
        x = rng.normal(scale=3, size=(4, 7))
        expected = [_naive_softmax_row(list(r)) for r in x]
        np.testing.assert_allclose(softmax(x), expected, rtol=1e-12)

    def test_integer_input_becomes_float(self):
        out = softmax(np.array([0, 0], dtype=np.int64))
        assert out.dtype == np.float64
        np.testing.assert_array_equal(out, [0.5, 0.5])

    def test_float32_stays_float32(self):
        out = softmax(np.array([1.0, 2.0], dtype=np.float32))
        assert out.dtype == np.float32

    def test_axis_zero(self):
        x = np.array([[0.0, 1.0], [math.log(2), 1.0]])
        out = softmax(x, axis=0)
        np.testing.assert_allclose(out[:, 0], [1 / 3, 2 / 3])
        np.testing.assert_allclose(out[:, 1], [0.5, 0.5])

    def test_does_not_modify_input(self):
        x = np.array([[1.0, 2.0, -np.inf]])
        before = x.copy()
        softmax(x, temperature=0.5)
        np.testing.assert_array_equal(x, before)


class TestSoftmaxProperties:
    @pytest.mark.parametrize("seed", SEEDS)
    @pytest.mark.parametrize("axis", [-1, 0, 1])
    def test_sums_to_one_and_in_unit_interval(self, seed, axis):
        x = np.random.default_rng(seed).normal(scale=10, size=(3, 4, 5))
        out = softmax(x, axis=axis)
        assert out.shape == x.shape
        np.testing.assert_allclose(out.sum(axis=axis), 1.0, rtol=1e-12)
        assert (out >= 0).all() and (out <= 1).all()

    @pytest.mark.parametrize("seed", SEEDS)
    def test_invariant_to_adding_constant_per_row(self, seed):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=(6, 5))
        c = rng.normal(scale=100, size=(6, 1))
        np.testing.assert_allclose(softmax(x + c), softmax(x), atol=1e-12)

    @pytest.mark.parametrize("seed", SEEDS)
    def test_temperature_is_division(self, seed):
        x = np.random.default_rng(seed).normal(size=(3, 6))
        for t in (0.3, 1.7, 5.0):
            np.testing.assert_allclose(softmax(x, temperature=t), softmax(x / t), rtol=1e-12)

    @pytest.mark.parametrize("seed", SEEDS)
    def test_preserves_order(self, seed):
        x = np.random.default_rng(seed).normal(size=20)
        out = softmax(x)
        np.testing.assert_array_equal(np.argsort(out, kind="stable"), np.argsort(x, kind="stable"))

    @pytest.mark.parametrize("seed", SEEDS)
    def test_low_temperature_tends_to_one_hot(self, seed):
        x = np.random.default_rng(seed).normal(size=(4, 6))
        out = softmax(x, temperature=1e-3)
        np.testing.assert_allclose(out, np.eye(6)[x.argmax(axis=-1)], atol=1e-9)

    @pytest.mark.parametrize("seed", SEEDS)
    def test_high_temperature_tends_to_uniform(self, seed):
        x = np.random.default_rng(seed).normal(size=(4, 6))
        out = softmax(x, temperature=1e6)
        np.testing.assert_allclose(out, 1 / 6, atol=1e-5)

    def test_entropy_increases_with_temperature(self):
        x = np.array([2.0, 1.0, 0.5, 3.0, 0.2])
        ent = [float(-(p * np.log(p)).sum()) for p in (softmax(x, temperature=t) for t in (0.2, 0.5, 1.0, 2.0, 4.0))]
        assert all(a < b for a, b in zip(ent, ent[1:]))

    def test_tiny_temperature_with_ties_splits_evenly(self):
        np.testing.assert_allclose(softmax([1.0, 3.0, 3.0], temperature=1e-300), [0, 0.5, 0.5])


class TestSoftmaxExtremes:
    def test_huge_equal_values(self):
        np.testing.assert_array_equal(softmax([1e308, 1e308]), [0.5, 0.5])

    def test_huge_opposite_values(self):
        np.testing.assert_array_equal(softmax([1e308, -1e308]), [1.0, 0.0])

    def test_huge_values_with_small_temperature(self):
        out = softmax([1e308, 0.0, -1e308], temperature=0.5)
        np.testing.assert_array_equal(out, [1.0, 0.0, 0.0])

    def test_very_negative_values(self):
        out = softmax([-1e308, -1e308 + 1e292])
        assert np.isfinite(out).all()
        assert out.sum() == pytest.approx(1.0)

    def test_neg_inf_gets_exactly_zero(self):
        out = softmax([0.0, -np.inf, math.log(2), -np.inf])
        assert out[1] == 0.0 and out[3] == 0.0
        np.testing.assert_allclose(out[[0, 2]], [1 / 3, 2 / 3])

    def test_all_neg_inf_row_raises(self):
        x = np.array([[0.0, 1.0], [-np.inf, -np.inf]])
        with pytest.raises(ValueError, match="entirely -inf"):
            softmax(x)

    def test_pos_inf_takes_all_weight(self):
        np.testing.assert_array_equal(softmax([1.0, np.inf, 3.0]), [0.0, 1.0, 0.0])
        np.testing.assert_array_equal(softmax([np.inf, np.inf, -np.inf]), [0.5, 0.5, 0.0])

    def test_pos_inf_only_affects_its_row(self):
        out = softmax(np.array([[np.inf, 0.0], [0.0, math.log(2)]]))
        np.testing.assert_allclose(out, [[1.0, 0.0], [1 / 3, 2 / 3]])

    def test_nan_raises(self):
        with pytest.raises(ValueError, match="NaN"):
            softmax([1.0, np.nan, 2.0])

    @pytest.mark.parametrize("t", [0, 0.0, -1.0, np.inf, -np.inf, np.nan, "abc", None, True])
    def test_bad_temperature_raises(self, t):
        with pytest.raises(ValueError, match="temperature"):
            softmax([1.0, 2.0], temperature=t)

    def test_scalar_raises(self):
        with pytest.raises(ValueError, match="at least one dimension"):
            softmax(3.0)

    def test_empty_axis_raises(self):
        with pytest.raises(ValueError, match="empty"):
            softmax(np.zeros((2, 0)))

    def test_axis_out_of_bounds_raises(self):
        with pytest.raises(ValueError, match="out of bounds"):
            softmax(np.zeros((2, 3)), axis=2)

    def test_non_numeric_raises(self):
        with pytest.raises(ValueError, match="numeric"):
            softmax(["a", "b"])


# =========================================================================== causal mask


class TestCausalMask:
    def test_three(self):
        expected = np.array([[True, False, False], [True, True, False], [True, True, True]])
        m = causal_mask(3)
        assert m.dtype == np.bool_
        np.testing.assert_array_equal(m, expected)

    @pytest.mark.parametrize("n", [1, 2, 7])
    def test_allowed_iff_j_le_i(self, n):
        m = causal_mask(n)
        for i in range(n):
            for j in range(n):
                assert m[i, j] == (j <= i)

    def test_zero(self):
        assert causal_mask(0).shape == (0, 0)

    def test_numpy_int_accepted(self):
        assert causal_mask(np.int64(2)).shape == (2, 2)

    @pytest.mark.parametrize("n", [-1, 2.5, "3", True, None])
    def test_bad_n_raises(self, n):
        with pytest.raises(ValueError, match="non-negative int"):
            causal_mask(n)


# =========================================================================== SDPA


def _reference_attention(Q, K, V, mask=None, temperature=1.0):
    """Straightforward reference implementation (no stability tricks needed for N(0,1))."""
    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]) / temperature
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    if mask is not None:
        e = np.where(mask, e, 0.0)
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ V, w


class TestScaledDotProductHandComputed:
    def test_two_by_two(self):
        # d_k = 4, so scores are divided by 2.
        # row 0: scores [2 ln2, 0] -> scaled [ln2, 0] -> weights [2/3, 1/3]
        # row 1: scores [0, 0]                      -> weights [1/2, 1/2]
        Q = np.array([[2 * math.log(2), 0, 0, 0], [0, 0, 0, 0]])
        K = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
        V = np.array([[3.0, 0.0], [0.0, 3.0]])
        out, w = scaled_dot_product_attention(Q, K, V)
        np.testing.assert_allclose(w, [[2 / 3, 1 / 3], [0.5, 0.5]], rtol=1e-14)
        np.testing.assert_allclose(out, [[2.0, 1.0], [1.5, 1.5]], rtol=1e-14)

    def test_two_by_two_with_causal_mask(self):
        Q = np.array([[2 * math.log(2), 0, 0, 0], [0, 0, 0, 0]])
        K = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
        V = np.array([[3.0, 0.0], [0.0, 3.0]])
        out, w = scaled_dot_product_attention(Q, K, V, mask=causal_mask(2))
        np.testing.assert_array_equal(w, [[1.0, 0.0], [0.5, 0.5]])
        np.testing.assert_allclose(out, [[3.0, 0.0], [1.5, 1.5]])

    def test_temperature_half_sharpens(self):
        # scaled score ln2 at T = 0.5 becomes 2 ln2 -> weights [4/5, 1/5]
        Q = np.array([[2 * math.log(2), 0, 0, 0]])
        K = np.array([[1.0, 0, 0, 0], [0, 0, 0, 0]])
        V = np.eye(2)
        _, w = scaled_dot_product_attention(Q, K, V, temperature=0.5)
        np.testing.assert_allclose(w, [[0.8, 0.2]], rtol=1e-14)

    def test_single_key_gets_everything(self):
        out, w = scaled_dot_product_attention([[1.0, 2.0]], [[3.0, -1.0]], [[7.0, 8.0, 9.0]])
        np.testing.assert_array_equal(w, [[1.0]])
        np.testing.assert_array_equal(out, [[7.0, 8.0, 9.0]])


class TestScaledDotProductProperties:
    @pytest.mark.parametrize("seed", SEEDS)
    def test_matches_reference_with_batch_and_heads(self, seed):
        rng = np.random.default_rng(seed)
        Q = rng.normal(size=(2, 3, 5, 4))
        K = rng.normal(size=(2, 3, 6, 4))
        V = rng.normal(size=(2, 3, 6, 7))
        out, w = scaled_dot_product_attention(Q, K, V)
        ref_out, ref_w = _reference_attention(Q, K, V)
        assert out.shape == (2, 3, 5, 7) and w.shape == (2, 3, 5, 6)
        np.testing.assert_allclose(w, ref_w, rtol=1e-12)
        np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)

    @pytest.mark.parametrize("seed", SEEDS)
    def test_rows_sum_to_one_and_masked_entries_exactly_zero(self, seed):
        rng = np.random.default_rng(seed)
        Q, K, V = (rng.normal(size=(3, 6, 4)) for _ in range(3))
        mask = _random_mask(rng, (3, 6, 6))
        out, w = scaled_dot_product_attention(Q, K, V, mask=mask)
        np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)
        assert (w[~mask] == 0.0).all()
        assert (w[mask] > 0.0).all()
        ref_out, ref_w = _reference_attention(Q, K, V, mask=mask)
        np.testing.assert_allclose(w, ref_w, rtol=1e-12)
        np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-12)

    @pytest.mark.parametrize("seed", SEEDS)
    def test_mask_broadcasts_over_batch(self, seed):
        rng = np.random.default_rng(seed)
        Q, K, V = (rng.normal(size=(2, 5, 3)) for _ in range(3))
        _, w = scaled_dot_product_attention(Q, K, V, mask=causal_mask(5))
        assert (w[:, ~causal_mask(5)] == 0.0).all()
        for b in range(2):
            _, wb = scaled_dot_product_attention(Q[b], K[b], V[b], mask=causal_mask(5))
            np.testing.assert_allclose(w[b], wb, rtol=1e-14)

    @pytest.mark.parametrize("seed", SEEDS)
    def test_causal_first_row_is_one_hot_and_output_is_first_value(self, seed):
        rng = np.random.default_rng(seed)
        Q, K, V = (rng.normal(size=(4, 3)) for _ in range(3))
        out, w = scaled_dot_product_attention(Q, K, V, mask=causal_mask(4))
        np.testing.assert_array_equal(w[0], [1.0, 0.0, 0.0, 0.0])
        np.testing.assert_allclose(out[0], V[0])

    @pytest.mark.parametrize("seed", SEEDS)
    def test_permutation_equivariance(self, seed):
        rng = np.random.default_rng(seed)
        Q, K, V = (rng.normal(size=(5, 3)) for _ in range(3))
        out, w = scaled_dot_product_attention(Q, K, V)
        p = rng.permutation(5)
        # permuting queries permutes output rows
        out_q, _ = scaled_dot_product_attention(Q[p], K, V)
        np.testing.assert_allclose(out_q, out[p], rtol=1e-12)
        # permuting keys and values together changes nothing in the output
        out_kv, w_kv = scaled_dot_product_attention(Q, K[p], V[p])
        np.testing.assert_allclose(out_kv, out, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(w_kv, w[:, p], rtol=1e-12)

    @pytest.mark.parametrize("seed", SEEDS)
    def test_output_is_convex_combination_of_values(self, seed):
        rng = np.random.default_rng(seed)
        Q, K, V = (rng.normal(scale=3, size=(6, 4)) for _ in range(3))
        out, _ = scaled_dot_product_attention(Q, K, V)
        assert (out <= V.max(axis=0) + 1e-12).all()
        assert (out >= V.min(axis=0) - 1e-12).all()

    @pytest.mark.parametrize("seed", SEEDS)
    def test_temperature_equals_scaling_queries(self, seed):
        rng = np.random.default_rng(seed)
        Q, K, V = (rng.normal(size=(4, 3)) for _ in range(3))
        out_t, w_t = scaled_dot_product_attention(Q, K, V, temperature=2.5)
        out_q, w_q = scaled_dot_product_attention(Q / 2.5, K, V)
        np.testing.assert_allclose(w_t, w_q, rtol=1e-12)
        np.testing.assert_allclose(out_t, out_q, rtol=1e-12)

    def test_low_temperature_picks_best_key(self):
        rng = np.random.default_rng(1)
        Q, K, V = (rng.normal(size=(4, 3)) for _ in range(3))
        _, w = scaled_dot_product_attention(Q, K, V, temperature=1e-4)
        np.testing.assert_allclose(w, np.eye(4)[(Q @ K.T).argmax(axis=1)], atol=1e-12)

    def test_inputs_not_modified(self):
        rng = np.random.default_rng(2)
        Q, K, V = (rng.normal(size=(3, 2)) for _ in range(3))
        copies = [a.copy() for a in (Q, K, V)]
        scaled_dot_product_attention(Q, K, V, mask=causal_mask(3))
        for a, c in zip((Q, K, V), copies):
            np.testing.assert_array_equal(a, c)

    def test_large_but_representable_scores(self):
        # scores 1e300 are finite: the softmax must stay stable (one-hot, no NaN).
        Q = np.array([[1e150, 0.0], [0.0, 1e150]])
        K = np.array([[1e150, 0.0], [0.0, 1e150]])
        out, w = scaled_dot_product_attention(Q, K, np.eye(2))
        np.testing.assert_array_equal(w, np.eye(2))
        np.testing.assert_array_equal(out, np.eye(2))


class TestScaledDotProductErrors:
    def setup_method(self):
        rng = np.random.default_rng(0)
        self.Q = rng.normal(size=(3, 4))
        self.K = rng.normal(size=(5, 4))
        self.V = rng.normal(size=(5, 2))

    def test_d_k_mismatch(self):
        with pytest.raises(ValueError, match="same last dimension d_k"):
            scaled_dot_product_attention(self.Q, self.K[:, :3], self.V)

    def test_key_value_length_mismatch(self):
        with pytest.raises(ValueError, match="same number of keys"):
            scaled_dot_product_attention(self.Q, self.K, self.V[:4])

    def test_one_dimensional_input(self):
        with pytest.raises(ValueError, match=r"Q must have shape \(\.\.\., L, d\)"):
            scaled_dot_product_attention(self.Q[0], self.K, self.V)

    def test_batch_dims_not_broadcastable(self):
        with pytest.raises(ValueError, match="not broadcastable"):
            scaled_dot_product_attention(np.zeros((2, 3, 4)), np.zeros((3, 5, 4)), np.zeros((3, 5, 2)))

    def test_mask_wrong_shape(self):
        with pytest.raises(ValueError, match=r"mask of shape \(4, 4\)"):
            scaled_dot_product_attention(self.Q, self.K, self.V, mask=np.ones((4, 4), bool))

    def test_mask_not_boolean(self):
        with pytest.raises(ValueError, match="boolean"):
            scaled_dot_product_attention(self.Q, self.K, self.V, mask=np.ones((3, 5)))

    def test_fully_masked_row(self):
        mask = np.ones((3, 5), bool)
        mask[1] = False
        with pytest.raises(ValueError, match=r"every key for query row\(s\) \[1\]"):
            scaled_dot_product_attention(self.Q, self.K, self.V, mask=mask)

    @pytest.mark.parametrize("name", ["Q", "K", "V"])
    @pytest.mark.parametrize("bad", [np.nan, np.inf])
    def test_non_finite_input(self, name, bad):
        args = {"Q": self.Q.copy(), "K": self.K.copy(), "V": self.V.copy()}
        args[name][0, 0] = bad
        with pytest.raises(ValueError, match=f"^{name} contains"):
            scaled_dot_product_attention(**args)

    def test_overflowing_scores(self):
        Q = np.array([[1e200, 1e200]])
        K = np.array([[1e200, -1e200], [1.0, 1.0]])
        with pytest.raises(ValueError, match="overflowed"):
            scaled_dot_product_attention(Q, K, np.eye(2))

    def test_bad_temperature(self):
        with pytest.raises(ValueError, match="temperature"):
            scaled_dot_product_attention(self.Q, self.K, self.V, temperature=0)


# =========================================================================== attention_trace


class TestAttentionTrace:
    def _xw(self, seed=0):
        rng = np.random.default_rng(seed)
        return (
            rng.normal(size=(5, 6)),
            rng.normal(size=(6, 4)),
            rng.normal(size=(6, 4)),
            rng.normal(size=(6, 3)),
        )

    @pytest.mark.parametrize("seed", SEEDS)
    def test_every_stage(self, seed):
        X, WQ, WK, WV = self._xw(seed)
        mask = causal_mask(5)
        tr = attention_trace(X, W_Q=WQ, W_K=WK, W_V=WV, mask=mask, temperature=0.7)
        assert isinstance(tr, AttentionTrace)
        np.testing.assert_allclose(tr.Q, X @ WQ)
        np.testing.assert_allclose(tr.K, X @ WK)
        np.testing.assert_allclose(tr.V, X @ WV)
        np.testing.assert_allclose(tr.scores, tr.Q @ tr.K.T)
        assert tr.d_k == 4
        np.testing.assert_allclose(tr.scaled, tr.scores / 2.0)
        assert np.isneginf(tr.masked[~mask]).all()
        np.testing.assert_array_equal(tr.masked[mask], tr.scaled[mask])
        np.testing.assert_allclose(tr.weights, softmax(tr.masked, temperature=0.7))
        assert (tr.weights[~mask] == 0.0).all()
        np.testing.assert_allclose(tr.output, tr.weights @ tr.V)
        out, w = scaled_dot_product_attention(tr.Q, tr.K, tr.V, mask=mask, temperature=0.7)
        np.testing.assert_allclose(tr.output, out)
        np.testing.assert_allclose(tr.weights, w)
        np.testing.assert_array_equal(tr.mask, mask)
        assert tr.temperature == 0.7

    def test_without_mask_masked_equals_scaled(self):
        X, WQ, WK, WV = self._xw()
        tr = attention_trace(X, W_Q=WQ, W_K=WK, W_V=WV)
        np.testing.assert_array_equal(tr.masked, tr.scaled)
        assert tr.mask is None

    def test_direct_qkv_equals_projection_path(self):
        X, WQ, WK, WV = self._xw()
        a = attention_trace(X, W_Q=WQ, W_K=WK, W_V=WV)
        b = attention_trace(Q=X @ WQ, K=X @ WK, V=X @ WV)
        assert b.X is None
        np.testing.assert_allclose(a.output, b.output)
        np.testing.assert_allclose(a.weights, b.weights)

    def test_argument_errors(self):
        X, WQ, WK, WV = self._xw()
        with pytest.raises(ValueError, match="not both"):
            attention_trace(X, Q=X, W_Q=WQ, W_K=WK, W_V=WV)
        with pytest.raises(ValueError, match="requires all of W_Q, W_K and W_V"):
            attention_trace(X, W_Q=WQ, W_K=WK)
        with pytest.raises(ValueError, match="all of Q, K and V"):
            attention_trace(Q=X, K=X)
        with pytest.raises(ValueError, match="only used together with X"):
            attention_trace(Q=X, K=X, V=X, W_Q=WQ)
        with pytest.raises(ValueError, match=r"W_K must have shape \(d_model=6, d\)"):
            attention_trace(X, W_Q=WQ, W_K=WK.T, W_V=WV)

    def test_frozen(self):
        X, WQ, WK, WV = self._xw()
        tr = attention_trace(X, W_Q=WQ, W_K=WK, W_V=WV)
        with pytest.raises(dataclasses.FrozenInstanceError):
            tr.weights = None  # type: ignore[misc]

    def test_to_dict_is_strict_json(self):
        X, WQ, WK, WV = self._xw()
        tr = attention_trace(X, W_Q=WQ, W_K=WK, W_V=WV, mask=causal_mask(5))
        d = tr.to_dict()
        text = json.dumps(d, allow_nan=False)  # raises if -inf leaked through
        back = json.loads(text)
        assert back["masked"][0][1] is None  # masked (-inf) entries become null
        assert back["masked"][0][0] == pytest.approx(tr.masked[0, 0])
        assert back["mask"][0] == [True, False, False, False, False]
        assert back["d_k"] == 4 and isinstance(back["d_k"], int)
        np.testing.assert_allclose(np.array(back["weights"]), tr.weights)
        assert len(back["Q"]) == 5 and len(back["Q"][0]) == 4

    def test_to_dict_rounding_and_raw(self):
        X, WQ, WK, WV = self._xw()
        tr = attention_trace(X, W_Q=WQ, W_K=WK, W_V=WV, mask=causal_mask(5))
        d = tr.to_dict(decimals=2)
        assert d["weights"][1][0] == round(float(tr.weights[1, 0]), 2)
        raw = tr.to_dict(json_safe=False)
        assert raw["masked"][0][1] == -math.inf


# =========================================================================== multi-head


def _naive_multi_head(X, WQ, WK, WV, WO, h, mask=None):
    """Per-head Python loop, the obvious way."""
    d = WQ.shape[1] // h
    dv = WV.shape[1] // h
    outs, ws = [], []
    for i in range(h):
        q = X @ WQ[:, i * d : (i + 1) * d]
        k = X @ WK[:, i * d : (i + 1) * d]
        v = X @ WV[:, i * dv : (i + 1) * dv]
        o, w = _reference_attention(q, k, v, mask=mask)
        outs.append(o)
        ws.append(w)
    concat = np.concatenate(outs, axis=-1)
    return concat @ WO, np.stack(ws), concat


def _mh_params(rng, L=5, d_model=8, d_out=8):
    return (
        rng.normal(size=(L, d_model)),
        rng.normal(size=(d_model, d_model)),
        rng.normal(size=(d_model, d_model)),
        rng.normal(size=(d_model, d_model)),
        rng.normal(size=(d_model, d_out)),
    )


class TestMultiHead:
    @pytest.mark.parametrize("seed", SEEDS)
    @pytest.mark.parametrize("h", [1, 2, 4, 8])
    @pytest.mark.parametrize("causal", [False, True])
    def test_equals_naive_loop(self, seed, h, causal):
        X, WQ, WK, WV, WO = _mh_params(np.random.default_rng(seed))
        mask = causal_mask(5) if causal else None
        out, w = multi_head_attention(X, WQ, WK, WV, WO, h, mask=mask)
        ref_out, ref_w, _ = _naive_multi_head(X, WQ, WK, WV, WO, h, mask=mask)
        assert w.shape == (h, 5, 5)
        assert out.shape == (5, 8)
        np.testing.assert_allclose(w, ref_w, rtol=1e-11)
        np.testing.assert_allclose(out, ref_out, rtol=1e-10, atol=1e-10)

    def test_one_head_equals_single_head_attention(self):
        X, WQ, WK, WV, WO = _mh_params(np.random.default_rng(3))
        out, w = multi_head_attention(X, WQ, WK, WV, WO, 1)
        o1, w1 = scaled_dot_product_attention(X @ WQ, X @ WK, X @ WV)
        np.testing.assert_allclose(w[0], w1, rtol=1e-12)
        np.testing.assert_allclose(out, o1 @ WO, rtol=1e-10, atol=1e-12)

    def test_non_square_projections_and_output(self):
        rng = np.random.default_rng(4)
        X = rng.normal(size=(4, 5))
        WQ, WK = rng.normal(size=(5, 6)), rng.normal(size=(5, 6))
        WV, WO = rng.normal(size=(5, 9)), rng.normal(size=(9, 2))
        out, w = multi_head_attention(X, WQ, WK, WV, WO, 3)
        ref_out, ref_w, _ = _naive_multi_head(X, WQ, WK, WV, WO, 3)
        assert out.shape == (4, 2)
        np.testing.assert_allclose(out, ref_out, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(w, ref_w, rtol=1e-12)

    def test_batched_input(self):
        rng = np.random.default_rng(5)
        _, WQ, WK, WV, WO = _mh_params(rng)
        X = rng.normal(size=(3, 5, 8))
        out, w = multi_head_attention(X, WQ, WK, WV, WO, 2, mask=causal_mask(5))
        assert out.shape == (3, 5, 8) and w.shape == (3, 2, 5, 5)
        for b in range(3):
            ob, wb = multi_head_attention(X[b], WQ, WK, WV, WO, 2, mask=causal_mask(5))
            np.testing.assert_allclose(out[b], ob, rtol=1e-12)
            np.testing.assert_allclose(w[b], wb, rtol=1e-12)

    def test_per_head_mask(self):
        rng = np.random.default_rng(6)
        X, WQ, WK, WV, WO = _mh_params(rng)
        mask = _random_mask(rng, (2, 5, 5))
        _, w = multi_head_attention(X, WQ, WK, WV, WO, 2, mask=mask)
        assert (w[~mask] == 0.0).all()

    def test_w_o_none_returns_concat(self):
        X, WQ, WK, WV, _ = _mh_params(np.random.default_rng(7))
        out, _ = multi_head_attention(X, WQ, WK, WV, None, 4)
        _, _, concat = _naive_multi_head(X, WQ, WK, WV, np.eye(8), 4)
        np.testing.assert_allclose(out, concat, rtol=1e-10, atol=1e-12)

    def test_not_divisible_raises(self):
        X, WQ, WK, WV, WO = _mh_params(np.random.default_rng(0), d_model=6, d_out=6)
        with pytest.raises(ValueError, match="must be divisible by num_heads=4"):
            multi_head_attention(X, WQ, WK, WV, WO, 4)

    @pytest.mark.parametrize("h", [0, -2, 1.5, True])
    def test_bad_num_heads(self, h):
        X, WQ, WK, WV, WO = _mh_params(np.random.default_rng(0))
        with pytest.raises(ValueError, match="num_heads must be a positive int"):
            multi_head_attention(X, WQ, WK, WV, WO, h)

    def test_shape_errors(self):
        X, WQ, WK, WV, WO = _mh_params(np.random.default_rng(0))
        with pytest.raises(ValueError, match=r"W_Q must have shape \(d_model=8"):
            multi_head_attention(X, WQ[:6], WK, WV, WO, 2)
        with pytest.raises(ValueError, match="W_Q and W_K must have the same width"):
            multi_head_attention(X, WQ, WK[:, :4], WV, WO, 2)
        with pytest.raises(ValueError, match=r"W_O must have shape \(num_heads\*d_v=8"):
            multi_head_attention(X, WQ, WK, WV, WO[:4], 2)
        with pytest.raises(ValueError, match=r"X must have shape"):
            multi_head_attention(X[0], WQ, WK, WV, WO, 2)

    def test_nan_in_weights_raises(self):
        X, WQ, WK, WV, WO = _mh_params(np.random.default_rng(0))
        WV = WV.copy()
        WV[1, 1] = np.nan
        with pytest.raises(ValueError, match="W_V contains NaN"):
            multi_head_attention(X, WQ, WK, WV, WO, 2)


class TestMultiHeadTrace:
    @pytest.mark.parametrize("seed", SEEDS)
    def test_trace_is_consistent(self, seed):
        X, WQ, WK, WV, WO = _mh_params(np.random.default_rng(seed), L=4, d_model=6, d_out=6)
        h = 3
        tr = multi_head_trace(X, WQ, WK, WV, WO, h, mask=causal_mask(4))
        assert isinstance(tr, MultiHeadTrace)
        assert (tr.num_heads, tr.d_k, tr.d_v) == (3, 2, 2)
        assert tr.Q.shape == (3, 4, 2) and tr.weights.shape == (3, 4, 4)
        assert tr.head_outputs.shape == (3, 4, 2) and tr.concat.shape == (4, 6)
        for i in range(h):
            cols = slice(2 * i, 2 * i + 2)
            np.testing.assert_allclose(tr.Q[i], X @ WQ[:, cols])
            np.testing.assert_allclose(tr.K[i], X @ WK[:, cols])
            np.testing.assert_allclose(tr.V[i], X @ WV[:, cols])
            o, w = scaled_dot_product_attention(tr.Q[i], tr.K[i], tr.V[i], mask=causal_mask(4))
            np.testing.assert_allclose(tr.weights[i], w, rtol=1e-12)
            np.testing.assert_allclose(tr.head_outputs[i], o, rtol=1e-12)
            np.testing.assert_allclose(tr.concat[:, cols], o, rtol=1e-12)
            np.testing.assert_allclose(tr.scaled[i], tr.Q[i] @ tr.K[i].T / math.sqrt(2))
        np.testing.assert_allclose(tr.output, tr.concat @ WO, rtol=1e-12)
        out, w = multi_head_attention(X, WQ, WK, WV, WO, h, mask=causal_mask(4))
        np.testing.assert_allclose(tr.output, out)
        np.testing.assert_allclose(tr.weights, w)

    def test_to_dict_json(self):
        X, WQ, WK, WV, WO = _mh_params(np.random.default_rng(0), L=3, d_model=4, d_out=4)
        d = multi_head_trace(X, WQ, WK, WV, WO, 2).to_dict(decimals=3)
        back = json.loads(json.dumps(d, allow_nan=False))
        assert back["num_heads"] == 2
        assert np.array(back["weights"]).shape == (2, 3, 3)
        assert np.array(back["concat"]).shape == (3, 4)
