"""Character language models in NumPy: counts → bigram, and a small MLP in the style of Bengio et al. (2003).

Module 04 of the course (content/module-04-bigram-mlp.md) reads its numbers from here; the build feeds it the
Tang poems of the npm package chinese-poetry (attention_course/poems/corpus.py). No I/O: texts in, arrays out.

* A text becomes ids over a vocabulary whose first entry is the boundary token (start and end of a poem) and
  whose second is the unknown token (every character outside the vocabulary).
* `bigram_counts` counts (previous, next) pairs; `bigram_probs` turns each row into P(next | previous) with
  add-α smoothing, so an unseen pair keeps a small probability instead of an infinite loss.
* `mean_nll` is the average negative log-likelihood (nats per token) and `perplexity` its exponential.
* `MLP`: embeddings of the `context` previous tokens, concatenated → tanh hidden layer → logits → softmax,
  trained with Adam on minibatches; deterministic for a given seed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

BOUNDARY = "◆"  # start and end of a poem
UNKNOWN = "□"  # a character outside the vocabulary


def build_vocab(texts: Iterable[str], size: int) -> list[str]:
    """[BOUNDARY, UNKNOWN] + the `size` most frequent characters of `texts` (ties: lower code point first)."""
    counts: dict[str, int] = {}
    for text in texts:
        for ch in text:
            counts[ch] = counts.get(ch, 0) + 1
    counts.pop(BOUNDARY, None)
    counts.pop(UNKNOWN, None)
    ranked = sorted(counts, key=lambda ch: (-counts[ch], ord(ch)))
    return [BOUNDARY, UNKNOWN] + ranked[:size]


def encode(text: str, vocab: Sequence[str]) -> np.ndarray:
    """Ids of BOUNDARY + text + BOUNDARY (characters outside `vocab` → UNKNOWN's id, 1)."""
    return encode_all([text], vocab)[0]


def encode_all(texts: Iterable[str], vocab: Sequence[str]) -> list[np.ndarray]:
    """`encode` for many texts (the vocabulary's index is built once)."""
    index = {ch: i for i, ch in enumerate(vocab)}
    return [np.array([0] + [index.get(ch, 1) for ch in text] + [0], dtype=np.int64) for text in texts]


def bigram_counts(sequences: Iterable[np.ndarray], vocab_size: int) -> np.ndarray:
    """(V, V) int64: counts[a, b] = how often id b follows id a."""
    previous, following = pairs(sequences)
    flat = np.bincount(previous * vocab_size + following, minlength=vocab_size * vocab_size)
    return flat.astype(np.int64).reshape(vocab_size, vocab_size)


def bigram_probs(counts: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """P(next | previous) = (count + α) / (row total + α·V), row by row."""
    smoothed = counts.astype(np.float64) + alpha
    return smoothed / smoothed.sum(axis=1, keepdims=True)


def pairs(sequences: Iterable[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """All (previous, next) id pairs of the sequences, as two flat arrays."""
    seqs = list(sequences)
    return (np.concatenate([s[:-1] for s in seqs]), np.concatenate([s[1:] for s in seqs]))


def mean_nll(probs: np.ndarray, previous: np.ndarray, following: np.ndarray) -> float:
    """Average −ln P(next | previous) over the pairs (nats per predicted token)."""
    return float(-np.log(probs[previous, following]).mean())


def perplexity(nll: float) -> float:
    """exp(average NLL): the model is as unsure as a uniform choice among this many tokens."""
    return float(np.exp(nll))


def unigram_probs(counts: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """P(token) from how often each id is predicted (the columns of the bigram counts), add-α smoothed."""
    totals = counts.sum(axis=0).astype(np.float64) + alpha
    return totals / totals.sum()


def tempered(p: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(log p / T): the same temperature as the attention softmax (T < 1 sharper, T > 1 flatter)."""
    logits = np.log(p) / temperature
    logits -= logits.max(axis=-1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=-1, keepdims=True)


def sample_bigram(
    probs: np.ndarray, rng: np.random.Generator, *, temperature: float = 1.0, max_len: int = 48
) -> list[int]:
    """Ids of one generated poem: from BOUNDARY, draw next ids until BOUNDARY again (or `max_len`)."""
    out: list[int] = []
    prev = 0
    while len(out) < max_len:
        nxt = int(rng.choice(len(probs), p=tempered(probs[prev], temperature)))
        if nxt == 0:
            break
        out.append(nxt)
        prev = nxt
    return out


def contexts(sequences: Iterable[np.ndarray], context: int) -> tuple[np.ndarray, np.ndarray]:
    """(N, context) ids of the previous `context` tokens (BOUNDARY-padded at a poem's start) and (N,) targets."""
    xs, ys = [], []
    for ids in sequences:
        padded = np.concatenate([np.zeros(context - 1, dtype=np.int64), ids])
        windows = np.lib.stride_tricks.sliding_window_view(padded[:-1], context)
        xs.append(windows)
        ys.append(ids[1:])
    return np.concatenate(xs), np.concatenate(ys)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


@dataclass
class MLP:
    """Bengio-style character model: C (V, d) embeddings; h = tanh(concat(C[x]) W1 + b1); logits = h W2 + b2."""

    C: np.ndarray
    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray

    @property
    def context(self) -> int:
        return self.W1.shape[0] // self.C.shape[1]

    @classmethod
    def init(
        cls,
        vocab_size: int,
        *,
        context: int,
        dim: int,
        hidden: int,
        seed: int = 0,
        dtype: type = np.float64,
        output_bias: np.ndarray | None = None,
    ) -> MLP:
        """Random weights (seeded); the output starts almost uniform, or at `output_bias` (e.g. log unigram
        frequencies, so training starts from the unigram model instead of from uniform guessing)."""
        rng = np.random.default_rng(seed)
        fan_in = context * dim
        return cls(
            C=rng.normal(0, 1, (vocab_size, dim)).astype(dtype),
            W1=(rng.normal(0, 1, (fan_in, hidden)) / np.sqrt(fan_in)).astype(dtype),
            b1=np.zeros(hidden, dtype=dtype),
            W2=(rng.normal(0, 1, (hidden, vocab_size)) * 0.01).astype(dtype),
            b2=(np.zeros(vocab_size) if output_bias is None else np.asarray(output_bias)).astype(dtype),
        )

    def params(self) -> list[np.ndarray]:
        return [self.C, self.W1, self.b1, self.W2, self.b2]

    def logits(self, x: np.ndarray) -> np.ndarray:
        h = np.tanh(self.C[x].reshape(len(x), -1) @ self.W1 + self.b1)
        return h @ self.W2 + self.b2

    def loss(self, x: np.ndarray, y: np.ndarray) -> float:
        """Average −ln P(y | x) (nats per token)."""
        return float(-log_softmax(self.logits(x))[np.arange(len(y)), y].mean())

    def loss_and_grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, list[np.ndarray]]:
        """The mean cross-entropy and its gradient for every parameter (hand-written backward pass)."""
        n = len(x)
        e = self.C[x].reshape(n, -1)
        h = np.tanh(e @ self.W1 + self.b1)
        logp = log_softmax(h @ self.W2 + self.b2)
        loss = float(-logp[np.arange(n), y].mean())
        dlogits = np.exp(logp)  # softmax − one-hot, over n
        dlogits[np.arange(n), y] -= 1
        dlogits /= n
        dW2 = h.T @ dlogits
        db2 = dlogits.sum(axis=0)
        dpre = (dlogits @ self.W2.T) * (1 - h * h)
        dW1 = e.T @ dpre
        db1 = dpre.sum(axis=0)
        de = (dpre @ self.W1.T).reshape(n, self.context, -1)
        dC = np.zeros_like(self.C)
        np.add.at(dC, x, de)
        return loss, [dC, dW1, db1, dW2, db2]

    def sample(self, rng: np.random.Generator, *, temperature: float = 1.0, max_len: int = 48) -> list[int]:
        """Ids of one generated poem, from BOUNDARY context until BOUNDARY (or `max_len`)."""
        window = [0] * self.context
        out: list[int] = []
        while len(out) < max_len:
            p = np.exp(log_softmax(self.logits(np.array([window]))[0] / temperature))
            nxt = int(rng.choice(len(p), p=p / p.sum()))
            if nxt == 0:
                break
            out.append(nxt)
            window = window[1:] + [nxt]
        return out


@dataclass
class TrainingRun:
    model: MLP
    steps: list[int] = field(default_factory=list)  # the steps at which the losses were measured
    train_loss: list[float] = field(default_factory=list)
    heldout_loss: list[float] = field(default_factory=list)


def train_mlp(
    model: MLP,
    x: np.ndarray,
    y: np.ndarray,
    x_held: np.ndarray,
    y_held: np.ndarray,
    *,
    steps: int,
    batch: int = 128,
    lr: float = 3e-3,
    eval_every: int = 100,
    seed: int = 0,
    eval_size: int = 8192,
) -> TrainingRun:
    """Adam on random minibatches (drawn with `seed`); every `eval_every` steps (and at the end) the mean loss
    on the same fixed `eval_size` positions of the training set and of the held-out set."""
    rng = np.random.default_rng(seed)
    eval_train = rng.choice(len(x), size=min(eval_size, len(x)), replace=False)
    eval_held = rng.choice(len(x_held), size=min(eval_size, len(x_held)), replace=False)
    params = model.params()
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    b1, b2, eps = 0.9, 0.999, 1e-8
    run = TrainingRun(model)

    def measure(step: int) -> None:
        run.steps.append(step)
        run.train_loss.append(model.loss(x[eval_train], y[eval_train]))
        run.heldout_loss.append(model.loss(x_held[eval_held], y_held[eval_held]))

    measure(0)
    for step in range(1, steps + 1):
        idx = rng.integers(0, len(x), size=batch)
        _, grads = model.loss_and_grads(x[idx], y[idx])
        for p, g, mi, vi in zip(params, grads, m, v):
            mi *= b1
            mi += (1 - b1) * g
            vi *= b2
            vi += (1 - b2) * g * g
            p -= lr * (mi / (1 - b1**step)) / (np.sqrt(vi / (1 - b2**step)) + eps)
        if step % eval_every == 0 or step == steps:
            measure(step)
    return run


def pca_2d(points: np.ndarray) -> np.ndarray:
    """(N, 2): the points projected on their first two principal axes (centred; signs fixed so the largest
    |coordinate| of each axis is positive, for a stable picture)."""
    centred = points - points.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    out = centred @ vt[:2].T
    for k in range(2):
        if out[np.argmax(np.abs(out[:, k])), k] < 0:
            out[:, k] = -out[:, k]
    return out


__all__ = [
    "BOUNDARY",
    "MLP",
    "UNKNOWN",
    "TrainingRun",
    "bigram_counts",
    "bigram_probs",
    "build_vocab",
    "contexts",
    "encode",
    "encode_all",
    "log_softmax",
    "mean_nll",
    "pairs",
    "pca_2d",
    "perplexity",
    "sample_bigram",
    "tempered",
    "train_mlp",
    "unigram_probs",
]
