"""attention_core.models.heads: the head-gallery scores, on hand-made patterns and on the real model."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.models.heads import DEFAULT_TEXT, HeadScores, pattern_scores, repeated_random_tokens, score_heads


def _pattern(t: int, kind: str) -> np.ndarray:
    a = np.zeros((t, t), dtype=np.float32)
    for i in range(t):
        j = {"prev": max(i - 1, 0), "first": 0, "self": i}[kind]
        a[i, j] = 1
    return a


def test_pattern_scores_on_pure_patterns() -> None:
    att = np.stack([_pattern(6, k) for k in ("prev", "first", "self")])[None]  # (1 layer, 3 heads, 6, 6)
    s = pattern_scores(att)
    np.testing.assert_array_equal(s["previous_token"], [[1, 0, 0]])
    np.testing.assert_allclose(s["first_token"], [[0.2, 1, 0]])  # prev head: of rows 1-5, only row 1 looks at 0
    np.testing.assert_array_equal(s["self_token"], [[0, 0, 1]])
    uniform = np.tril(np.ones((6, 6), np.float32))
    uniform /= uniform.sum(-1, keepdims=True)
    u = pattern_scores(uniform[None, None])
    assert u["first_token"][0, 0] == pytest.approx(np.mean([1 / n for n in range(2, 7)]))
    with pytest.raises(ValueError):
        pattern_scores(np.ones((2, 2, 2, 2)))


def test_repeated_random_tokens() -> None:
    seq = repeated_random_tokens(10, seed=3)
    assert len(seq) == 20 and seq[:10] == seq[10:] and len(set(seq[:10])) == 10
    assert all(1000 <= t < 10000 for t in seq)
    assert seq == repeated_random_tokens(10, seed=3) != repeated_random_tokens(10, seed=4)


def test_best_orders_heads() -> None:
    z = np.zeros((2, 3), np.float32)
    s = HeadScores(
        previous_token=np.array([[0.1, 0.9, 0.2], [0.5, 0.0, 0.3]], np.float32),
        first_token=z,
        self_token=z,
        induction=z,
    )
    assert [(layer, head) for layer, head, _ in s.best("previous_token", 3)] == [(0, 1), (1, 0), (1, 2)]
    with pytest.raises(KeyError):
        s.best("nonsense")


def test_real_heads_show_the_known_behaviours(smollm2) -> None:
    """Measured (n=25, 4 sequences; DEFAULT_TEXT, 59 tokens): previous-token L16H0 0.73, L1H2 0.68,
    L11H1 0.68; first-token L18H8 1.00, L18H7 1.00; self-token L11H6 0.70; induction L18H6 0.91,
    L17H3 0.81, L17H4 0.79 (median head 0.01).  Here with 2 sequences to keep the test short."""
    s = score_heads(smollm2.weights, smollm2.encode(DEFAULT_TEXT), n=25, n_sequences=2)
    for name in ("previous_token", "first_token", "self_token", "induction"):
        arr = s.get(name)
        assert arr.shape == (30, 9) and arr.dtype == np.float32 and (arr >= 0).all() and (arr <= 1 + 1e-6).all()
    assert s.best("previous_token", 1)[0][2] > 0.5
    assert s.best("first_token", 1)[0][2] > 0.95
    assert s.best("self_token", 1)[0][2] > 0.4
    assert s.best("induction", 1)[0][2] > 0.6 and float(np.median(s.induction)) < 0.05
    assert {(layer, head) for layer, head, _ in s.best("induction", 3)} & {(18, 6), (17, 3), (17, 4)}
    # early layers have no induction heads: the mechanism needs a previous-token head before it
    assert s.induction[:3].max() < 0.2
