"""The hand-designed examples really show the patterns the course text describes."""

from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np
import pytest

from attention_core import EXAMPLES, Example, causal_mask, get_example, softmax
from attention_core.core import AttentionTrace, MultiHeadTrace

# NumPy numeric warnings (overflow, invalid value) are failures; unrelated warnings (e.g. a ResourceWarning
# raised while another test's objects are garbage-collected) are not this module's concern.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

EXPECTED_IDS = {
    "cat-fast",
    "animal-tired",
    "animal-wide",
    "xiaoming",
    "four-words",
    "temperature-scores",
    "multi-head",
}
CJK = re.compile(r"[\u4e00-\u9fff]")


def ranking(row: np.ndarray, tokens: tuple[str, ...]) -> list[str]:
    """Tokens ordered by weight, strongest first."""
    return [tokens[i] for i in np.argsort(-row, kind="stable")]


# =========================================================================== registry


def test_exact_ids():
    assert set(EXAMPLES) == EXPECTED_IDS
    for key, ex in EXAMPLES.items():
        assert ex.id == key


def test_get_example_and_unknown_id_lists_valid_ids():
    assert get_example("xiaoming") is EXAMPLES["xiaoming"]
    with pytest.raises(KeyError) as info:
        get_example("no-such-example")
    msg = str(info.value)
    assert "no-such-example" in msg
    for ex_id in EXPECTED_IDS:
        assert ex_id in msg


@pytest.mark.parametrize("ex_id", sorted(EXPECTED_IDS))
def test_metadata(ex_id):
    ex = get_example(ex_id)
    assert isinstance(ex, Example)
    assert CJK.search(ex.title), "title must be Chinese"
    assert "示意" in ex.note, "note must say the numbers are illustrative"
    assert isinstance(ex.tokens, tuple) and all(isinstance(t, str) and t for t in ex.tokens)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ex.title = "x"  # type: ignore[misc]
    for name in ("X", "W_Q", "W_K", "W_V", "W_O", "scores"):
        arr = getattr(ex, name)
        if arr is not None:
            assert arr.dtype == np.float64
            assert np.isfinite(arr).all()
            with pytest.raises(ValueError):
                arr[(0,) * arr.ndim] = 1.0  # read-only: shared by the whole build


@pytest.mark.parametrize("ex_id", sorted(EXPECTED_IDS - {"temperature-scores"}))
def test_shapes_and_weights_are_valid(ex_id):
    ex = get_example(ex_id)
    L, d = ex.X.shape
    assert L == len(ex.tokens)
    assert ex.W_Q.shape[0] == ex.W_K.shape[0] == ex.W_V.shape[0] == d
    assert ex.W_Q.shape == ex.W_K.shape
    if ex.feature_labels:
        assert len(ex.feature_labels) == d
    for causal in (True, False):
        w = ex.weights(causal=causal)
        np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-12)
        if causal:
            assert (w[..., ~causal_mask(L)] == 0.0).all()


@pytest.mark.parametrize("ex_id", sorted(EXPECTED_IDS))
def test_to_dict_is_json(ex_id):
    ex = get_example(ex_id)
    d = json.loads(json.dumps(ex.to_dict(decimals=4), allow_nan=False, ensure_ascii=False))
    assert d["id"] == ex_id and d["tokens"] == list(ex.tokens)
    if ex.X is not None:
        assert np.array(d["X"]).shape == ex.X.shape
        tr = ex.multi_head_trace() if ex.num_heads > 1 else ex.trace()
        json.dumps(tr.to_dict(decimals=4), allow_nan=False)


# =========================================================================== cat-fast


class TestCatFast:
    ex = get_example("cat-fast")

    def row(self, token, causal=True):
        return self.ex.weights(causal=causal)[self.ex.index(token)]

    def test_tokens_and_default(self):
        assert self.ex.tokens == ("小", "猫", "跑", "得", "真", "快")
        assert self.ex.causal is True

    def test_default_weights_are_causal(self):
        np.testing.assert_array_equal(self.ex.weights(), self.ex.weights(causal=True))

    def test_language_model_rows(self):
        toks = self.ex.tokens
        assert ranking(self.row("猫"), toks)[0] == "小"
        assert ranking(self.row("跑"), toks)[0] == "猫"
        assert ranking(self.row("得"), toks)[0] == "跑"
        assert ranking(self.row("真"), toks)[0] == "得"
        assert ranking(self.row("快"), toks)[0] == "跑"

    def test_strengths(self):
        assert self.row("快")[self.ex.index("跑")] > 0.5
        assert self.row("猫")[self.ex.index("小")] > 0.7
        assert self.row("跑")[self.ex.index("猫")] > 0.6
        np.testing.assert_array_equal(self.row("小"), [1, 0, 0, 0, 0, 0])

    def test_without_mask_small_looks_at_cat(self):
        assert ranking(self.row("小", causal=False), self.ex.tokens)[0] == "猫"


# =========================================================================== animal-*


class TestAnimal:
    tired = get_example("animal-tired")
    wide = get_example("animal-wide")

    def test_tokens(self):
        assert self.tired.tokens == tuple("The animal didn't cross the street because it was tired".split())
        assert self.wide.tokens == tuple("The animal didn't cross the street because it was too wide".split())
        assert self.tired.query == self.wide.query == "it"

    @pytest.mark.parametrize("causal", [True, False])
    @pytest.mark.parametrize(("ex_id", "referent"), [("animal-tired", "animal"), ("animal-wide", "street")])
    def test_it_refers_to_the_right_noun(self, ex_id, referent, causal):
        ex = get_example(ex_id)
        i = ex.index("it")
        row = ex.weights(causal=causal)[i]
        assert ex.tokens[int(np.argmax(row))] == referent  # whole row
        assert ex.tokens[int(np.argmax(row[:i]))] == referent  # among earlier tokens
        other = "street" if referent == "animal" else "animal"
        assert row[ex.index(referent)] > 2 * row[ex.index(other)]
        assert row[ex.index(referent)] > 0.3

    def test_only_the_context_hint_differs(self):
        # Same projection matrices; the shared tokens have identical embeddings,
        # so the flip is caused by the `it` vector (and the last word) alone.
        for name in ("W_Q", "W_K", "W_V"):
            np.testing.assert_array_equal(getattr(self.tired, name), getattr(self.wide, name))
        for tok in ("The", "animal", "didn't", "cross", "the", "street", "because", "was"):
            np.testing.assert_array_equal(self.tired.X[self.tired.index(tok)], self.wide.X[self.wide.index(tok)])
        assert not np.array_equal(self.tired.X[self.tired.index("it")], self.wide.X[self.wide.index("it")])

    def test_adjectives_point_at_their_nouns(self):
        assert ranking(self.tired.weights()[self.tired.index("tired")], self.tired.tokens)[0] == "animal"
        assert ranking(self.wide.weights()[self.wide.index("wide")], self.wide.tokens)[0] == "street"


# =========================================================================== xiaoming


class TestXiaoming:
    ex = get_example("xiaoming")

    def row(self, token):
        return self.ex.weights()[self.ex.index(token)]

    def test_tokens_and_default(self):
        assert self.ex.tokens == ("小明", "打", "了", "小红", "，", "因为", "他", "生气")
        assert self.ex.causal is False
        assert self.ex.query == "他"

    def test_he_refers_to_xiaoming_then_xiaohong(self):
        row = self.row("他")
        r = ranking(row, self.ex.tokens)
        assert r[:2] == ["小明", "小红"]
        assert row[self.ex.index("小明")] > 0.45
        assert row[self.ex.index("小红")] > 0.2
        assert row[self.ex.index("小明")] > 1.5 * row[self.ex.index("小红")]

    def test_he_also_under_causal_mask(self):
        row = self.ex.weights(causal=True)[self.ex.index("他")]
        assert ranking(row, self.ex.tokens)[:2] == ["小明", "小红"]

    def test_other_rows(self):
        toks = self.ex.tokens
        assert set(ranking(self.row("打"), toks)[:2]) == {"小明", "小红"}
        assert set(ranking(self.row("生气"), toks)[:2]) == {"他", "小明"}
        assert ranking(self.row("了"), toks)[0] == "打"
        assert ranking(self.row("小明"), toks)[0] == "打"
        assert ranking(self.row("小红"), toks)[0] == "打"
        assert ranking(self.row("因为"), toks)[0] == "生气"
        # punctuation has no preference: an (almost) uniform row
        np.testing.assert_allclose(self.row("，"), 1 / 8, atol=0.02)


# =========================================================================== four-words


class TestFourWords:
    ex = get_example("four-words")

    def test_shapes(self):
        assert self.ex.tokens == ("我", "爱", "吃", "苹果")
        assert self.ex.X.shape == (4, 3)
        assert self.ex.W_Q.shape == self.ex.W_K.shape == self.ex.W_V.shape == (3, 3)
        assert self.ex.causal is False

    def test_readable_numbers(self):
        # inputs have at most one decimal ...
        for name in ("X", "W_Q", "W_K", "W_V"):
            a = getattr(self.ex, name)
            np.testing.assert_allclose(a, np.round(a, 1), atol=1e-12)
        # ... so Q, K, V (each 4x3) have at most two
        tr = self.ex.trace()
        for a in (tr.Q, tr.K, tr.V):
            assert a.shape == (4, 3)
            np.testing.assert_allclose(a, np.round(a, 2), atol=1e-12)
            assert np.abs(a).max() <= 10

    def test_hand_checked_entries(self):
        tr = self.ex.trace()
        np.testing.assert_allclose(tr.Q[2], [2.0, 0.0, 2.0])  # 吃 looks for nouns and food
        np.testing.assert_allclose(tr.K[3], [1.0, 0.0, 0.5])  # 苹果 offers noun + (damped) food
        assert tr.scores[2, 3] == pytest.approx(3.0)  # 2·1 + 0·0 + 2·0.5
        assert tr.scaled[2, 3] == pytest.approx(3.0 / math.sqrt(3))

    def test_pattern(self):
        w = self.ex.weights()
        toks = self.ex.tokens
        assert ranking(w[2], toks)[0] == "苹果"  # 吃 -> 苹果
        assert ranking(w[3], toks)[0] == "吃"  # 苹果 -> 吃
        assert set(ranking(w[0], toks)[:2]) == {"爱", "吃"}  # 我 -> the actions
        assert not np.allclose(w, 0.25, atol=0.05), "weights should not be flat"


# =========================================================================== temperature-scores


class TestTemperatureScores:
    ex = get_example("temperature-scores")

    def test_fields(self):
        assert self.ex.scores is not None and self.ex.X is None
        assert self.ex.scores.shape == (len(self.ex.tokens),)
        assert 5 <= len(self.ex.tokens) <= 6
        assert self.ex.query == "他"

    def test_weights_are_softmax_of_scores(self):
        for t in (0.2, 1.0, 4.0):
            np.testing.assert_allclose(self.ex.weights(temperature=t), softmax(self.ex.scores / t), rtol=1e-14)

    def test_low_temperature_almost_one_hot(self):
        w = self.ex.weights(temperature=0.2)
        assert self.ex.tokens[int(np.argmax(w))] == "小明"
        assert w.max() > 0.98

    def test_high_temperature_almost_uniform(self):
        w = self.ex.weights(temperature=4.0)
        n = len(w)
        entropy = float(-(w * np.log(w)).sum())
        assert entropy / math.log(n) > 0.98
        assert w.max() - w.min() < 0.1
        assert w.max() < 1.5 / n

    def test_default_temperature_in_between(self):
        w = self.ex.weights()
        assert 0.3 < w.max() < 0.7

    def test_monotone_in_temperature(self):
        tops = [self.ex.weights(temperature=t).max() for t in np.arange(0.2, 4.01, 0.1)]
        assert all(a > b for a, b in zip(tops, tops[1:]))


# =========================================================================== multi-head


class TestMultiHeadExample:
    ex = get_example("multi-head")

    def test_shapes(self):
        assert self.ex.num_heads == 3
        assert self.ex.X.shape == (len(self.ex.tokens), 6)
        assert self.ex.W_Q.shape == self.ex.W_K.shape == self.ex.W_V.shape == (6, 6)
        assert self.ex.W_O.shape == (6, 6)
        assert self.ex.head_labels == ("看前一个词", "看指代对象", "看自己")
        tr = self.ex.multi_head_trace()
        assert isinstance(tr, MultiHeadTrace)
        assert tr.d_k == 2 and tr.weights.shape == (3, 7, 7)
        np.testing.assert_allclose(tr.output, tr.concat @ self.ex.W_O)

    @pytest.mark.parametrize("causal", [True, False])
    def test_head0_previous_token(self, causal):
        w = self.ex.weights(causal=causal)[0]
        for i in range(1, len(self.ex.tokens)):
            assert int(np.argmax(w[i])) == i - 1
            assert w[i, i - 1] > 0.8

    @pytest.mark.parametrize("causal", [True, False])
    def test_head1_pronoun_to_referent(self, causal):
        w = self.ex.weights(causal=causal)[1]
        row = w[self.ex.index("他")]
        assert ranking(row, self.ex.tokens)[:2] == ["小明", "小红"]
        assert row[self.ex.index("小明")] > 0.6

    @pytest.mark.parametrize("causal", [True, False])
    def test_head2_self(self, causal):
        w = self.ex.weights(causal=causal)[2]
        L = len(self.ex.tokens)
        np.testing.assert_array_equal(np.argmax(w, axis=-1), np.arange(L))
        assert (np.diag(w) > 0.8).all()

    def test_heads_differ(self):
        w = self.ex.weights()
        for a in range(3):
            for b in range(a + 1, 3):
                assert not np.allclose(w[a], w[b], atol=0.1)

    def test_single_head_trace_refused(self):
        with pytest.raises(ValueError, match="multi_head_trace"):
            self.ex.trace()


# =========================================================================== Example API


def test_trace_uses_default_mask_and_overrides():
    ex = get_example("cat-fast")
    tr = ex.trace()
    assert isinstance(tr, AttentionTrace)
    np.testing.assert_array_equal(tr.mask, causal_mask(6))
    assert ex.trace(causal=False).mask is None
    custom = np.ones((6, 6), bool)
    custom[:, 0] = False
    w = ex.trace(mask=custom).weights
    assert (w[:, 0] == 0.0).all()
    np.testing.assert_allclose(ex.trace(temperature=0.5).weights, ex.weights(temperature=0.5))


def test_score_only_example_has_no_trace():
    with pytest.raises(ValueError, match="score-only"):
        get_example("temperature-scores").trace()


def test_index_unknown_token():
    with pytest.raises(ValueError, match="not a token"):
        get_example("xiaoming").index("她")


def test_example_validation():
    with pytest.raises(ValueError, match="rows for"):
        Example(
            id="bad",
            title="坏",
            tokens=("a",),
            note="示意",
            X=np.zeros((2, 2)),
            W_Q=np.zeros((2, 2)),
            W_K=np.zeros((2, 2)),
            W_V=np.zeros((2, 2)),
        )
    with pytest.raises(ValueError, match="scores must have shape"):
        Example(id="bad", title="坏", tokens=("a", "b"), note="示意", scores=[1.0])
