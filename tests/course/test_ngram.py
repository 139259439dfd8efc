"""attention_core.ngram against hand computations on a tiny corpus (module 04's bigram and MLP language models)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import ngram

# The tiny corpus: "ab" and "aab". a occurs 3 times, b twice, so the vocabulary is [◆, □, a, b] (ids 0 1 2 3) and
# the sequences are ◆ab◆ = [0 2 3 0] and ◆aab◆ = [0 2 2 3 0].
TEXTS = ["ab", "aab"]


@pytest.fixture
def tiny():
    vocab = ngram.build_vocab(TEXTS, 2)
    return vocab, ngram.encode_all(TEXTS, vocab)


def test_vocabulary_and_encoding(tiny):
    vocab, seqs = tiny
    assert vocab == ["◆", "□", "a", "b"]
    assert [s.tolist() for s in seqs] == [[0, 2, 3, 0], [0, 2, 2, 3, 0]]
    assert ngram.encode("ac", vocab).tolist() == [0, 2, 1, 0]  # c is outside the vocabulary → □
    # ties are broken by code point: with room for one character of "ba", "a" (U+0061) wins over "b"
    assert ngram.build_vocab(["ba"], 1) == ["◆", "□", "a"]


def test_bigram_counts_by_hand(tiny):
    vocab, seqs = tiny
    counts = ngram.bigram_counts(seqs, len(vocab))
    # pairs: (◆a) twice, (ab) twice, (b◆) twice, (aa) once — 7 pairs in all
    expected = np.zeros((4, 4), dtype=np.int64)
    expected[0, 2] = 2
    expected[2, 3] = 2
    expected[3, 0] = 2
    expected[2, 2] = 1
    assert np.array_equal(counts, expected)


def test_add_alpha_probabilities_by_hand(tiny):
    vocab, seqs = tiny
    counts = ngram.bigram_counts(seqs, len(vocab))
    # row a with α = 1: counts [0 0 1 2] + 1 = [1 1 2 3], total 7
    assert ngram.bigram_probs(counts, 1.0)[2] == pytest.approx([1 / 7, 1 / 7, 2 / 7, 3 / 7])
    # α = 0 is the maximum-likelihood estimate N(a, b) / N(a)
    with np.errstate(invalid="ignore"):  # row □ has no counts at all: 0 / 0
        assert ngram.bigram_probs(counts, 0.0)[2] == pytest.approx([0, 0, 1 / 3, 2 / 3])


def test_nll_and_perplexity_by_hand(tiny):
    vocab, seqs = tiny
    probs = ngram.bigram_probs(ngram.bigram_counts(seqs, len(vocab)), 1.0)
    prev, nxt = ngram.pairs([ngram.encode("ab", vocab)])
    # ◆ab◆ under α = 1: P(a|◆) = (2+1)/(2+4) = 1/2, P(b|a) = (2+1)/(3+4) = 3/7, P(◆|b) = (2+1)/(2+4) = 1/2
    nll = ngram.mean_nll(probs, prev, nxt)
    assert nll == pytest.approx(-(math.log(1 / 2) + math.log(3 / 7) + math.log(1 / 2)) / 3)
    # perplexity = (product of the three probabilities) ** (−1/3) = (3/28) ** (−1/3)
    assert ngram.perplexity(nll) == pytest.approx((3 / 28) ** (-1 / 3))


def test_uniform_model_has_perplexity_equal_to_vocabulary_size():
    probs = np.full((5, 5), 1 / 5)
    prev, nxt = np.array([0, 1, 2, 3]), np.array([4, 0, 3, 1])
    assert ngram.perplexity(ngram.mean_nll(probs, prev, nxt)) == pytest.approx(5)


def test_unigram_counts_predicted_tokens(tiny):
    vocab, seqs = tiny
    counts = ngram.bigram_counts(seqs, len(vocab))
    # predicted tokens (columns): ◆ 2, □ 0, a 3, b 2 → α = 0: [2 0 3 2] / 7
    assert ngram.unigram_probs(counts, 0.0) == pytest.approx([2 / 7, 0, 3 / 7, 2 / 7])


def test_temperature_is_a_power_of_the_probabilities():
    p = np.array([0.5, 0.25, 0.25])
    # T = 0.5: p² = [.25 .0625 .0625], normalised by .375
    assert ngram.tempered(p, 0.5) == pytest.approx([2 / 3, 1 / 6, 1 / 6])
    assert ngram.tempered(p, 1.0) == pytest.approx(p)
    assert ngram.tempered(p, 1000.0) == pytest.approx([1 / 3] * 3, abs=1e-3)


def test_bigram_sampler_follows_the_only_path():
    # a deterministic chain ◆ → 2 → 3 → ◆: every draw has one choice
    probs = np.zeros((4, 4))
    probs[0, 2] = probs[2, 3] = probs[3, 0] = 1.0
    probs[1, 0] = 1.0
    with np.errstate(divide="ignore"):
        assert ngram.sample_bigram(probs, np.random.default_rng(0)) == [2, 3]


def test_sampling_is_seeded(tiny):
    vocab, seqs = tiny
    probs = ngram.bigram_probs(ngram.bigram_counts(seqs, len(vocab)), 1.0)
    a = [ngram.sample_bigram(probs, np.random.default_rng(7), max_len=20) for _ in range(3)]
    b = [ngram.sample_bigram(probs, np.random.default_rng(7), max_len=20) for _ in range(3)]
    assert a == b


def test_contexts_pad_with_the_boundary(tiny):
    vocab, seqs = tiny
    x, y = ngram.contexts(seqs[:1], 2)
    # ◆ab◆ with a context of 2: [◆◆]→a, [◆a]→b, [ab]→◆
    assert x.tolist() == [[0, 0], [0, 2], [2, 3]]
    assert y.tolist() == [2, 3, 0]


def test_untrained_output_layer_is_uniform():
    model = ngram.MLP.init(6, context=2, dim=3, hidden=4, seed=0)
    model.W2[:] = 0
    # all logits 0 → softmax uniform over 6 → loss ln 6 whatever the input
    assert model.loss(np.array([[0, 1], [2, 3]]), np.array([4, 5])) == pytest.approx(math.log(6))


def test_mlp_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    model = ngram.MLP.init(5, context=2, dim=3, hidden=4, seed=1)
    model.W2[:] = rng.normal(0, 0.5, model.W2.shape)  # away from the near-zero start, so every gradient is visible
    x, y = rng.integers(0, 5, (6, 2)), rng.integers(0, 5, 6)
    _, grads = model.loss_and_grads(x, y)
    eps = 1e-6
    for p, g in zip(model.params(), grads):
        for idx in [tuple(rng.integers(0, s) for s in p.shape) for _ in range(5)]:
            old = p[idx]
            p[idx] = old + eps
            up = model.loss(x, y)
            p[idx] = old - eps
            down = model.loss(x, y)
            p[idx] = old
            assert g[idx] == pytest.approx((up - down) / (2 * eps), abs=1e-6)


def test_training_lowers_the_loss_and_is_deterministic(tiny):
    vocab, seqs = tiny
    x, y = ngram.contexts(seqs, 2)

    def run():
        model = ngram.MLP.init(len(vocab), context=2, dim=4, hidden=8, seed=0)
        return ngram.train_mlp(model, x, y, x, y, steps=200, batch=8, lr=0.05, eval_every=50, seed=0)

    first, second = run(), run()
    assert first.steps == [0, 50, 100, 150, 200]
    assert first.train_loss == second.train_loss
    assert first.train_loss[0] == pytest.approx(math.log(4), abs=0.05)  # W2 ≈ 0 at the start: about uniform
    # ◆ab◆ / ◆aab◆ with 2 characters of context: only [◆a] is ambiguous (→ a or b), so the loss ends far below ln 4
    assert first.train_loss[-1] < 0.5


def test_pca_of_points_on_a_line():
    pts = np.array([[0.0, 0.0], [1.0, 1.0], [3.0, 3.0]])
    # centred: (−4/3, −4/3), (−1/3, −1/3), (5/3, 5/3); on the unit axis (1, 1)/√2: −4√2/3, −√2/3, 5√2/3
    xy = ngram.pca_2d(pts)
    assert xy[:, 0] == pytest.approx([-4 * math.sqrt(2) / 3, -math.sqrt(2) / 3, 5 * math.sqrt(2) / 3])
    assert xy[:, 1] == pytest.approx([0, 0, 0], abs=1e-12)
