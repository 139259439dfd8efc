"""The tiny Transformer of the Tang poems at build time: its committed weights (checked, artifacts.py), its
held-out perplexity per character, its attention on the held-out poems scored for poetic patterns
(head_scores.py), its samples, and the weights as the browser loads them.

Per character, like the bigram and the MLP: every held-out poem is scored on its own, from its opening ◆, on
each of its characters and its closing ◆ (the same targets as ngram.pairs). A poem of up to `context` predictions
is one forward pass; a longer one is cut into windows: the first predicts the first `context` targets, each
next one ends `context // 2` targets further on and predicts only those, so every prediction sees at least
`context // 2` characters of its poem (all of them while the poem fits).
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from attention_core import ngram, tiny_gpt
from builder import cache as cachestore
from builder import progress
from builder.model import BuildOptions

from . import artifacts, head_scores, weights_format
from .corpus import POEM_MODELS, POEMS_SHA256

BATCH = 64  # windows per forward pass when evaluating
SAMPLES = 4  # poems written at T = 1 with the seed of the bigram's and the MLP's samples (ngram_lm.py)
SAMPLE_SEED = 1
MAX_LEN = 48  # the n-gram samplers' cap (attention_core.ngram)
EXAMPLE = "白日依山尽，黄河入海流。欲穷千里目，更上一层楼。"  # the held-out worked example: its attention, shown


def windows(ids: np.ndarray, context: int) -> list[tuple[int, int, int]]:
    """(start, end, first scored) of the windows that score every target of one poem: inputs ids[start:end],
    positions first … end − start − 1 of the window are scored (predicting ids[start + 1 + k])."""
    n = len(ids) - 1  # targets
    if n <= context:
        return [(0, n, 0)]
    out = [(0, context, 0)]
    done = context
    while done < n:
        end = min(done + context // 2, n)
        out.append((end - context, end, done - (end - context)))
        done = end
    return out


def held_out_nll(
    params: tiny_gpt.Params, cfg: tiny_gpt.Config, poems_ids: list[np.ndarray], *, keep_attention: Any = None
) -> dict[str, float]:
    """{"nll": mean nats per predicted character, "ppl", "targets"} over the poems (see the module docstring).
    `keep_attention(poem_index, ids, attention)` is called once per poem with all its ids and the attention of its
    first window (layers, heads, T, T), T = min(len(ids) − 1, context): the whole poem when it fits."""
    groups: dict[int, list[tuple[int, int, int, int]]] = defaultdict(list)  # window length → (poem, s, e, first)
    for i, ids in enumerate(poems_ids):
        for s, e, first in windows(ids, cfg.context):
            groups[e - s].append((i, s, e, first))
    total, count = 0.0, 0
    for length in sorted(groups):
        items = groups[length]
        for k in range(0, len(items), BATCH):
            chunk = items[k : k + BATCH]
            x = np.stack([poems_ids[i][s:e] for i, s, e, _ in chunk])
            y = np.stack([poems_ids[i][s + 1 : e + 1] for i, s, e, _ in chunk])
            out = tiny_gpt.forward(params, cfg, x)
            logp = tiny_gpt.log_softmax(out.logits.astype(np.float64))
            nll = -np.take_along_axis(logp, y[..., None], axis=-1)[..., 0]
            for row, (i, s, e, first) in enumerate(chunk):
                total += float(nll[row, first:].sum())
                count += e - s - first
                if keep_attention is not None and s == 0:
                    keep_attention(i, poems_ids[i], out.attention[:, row, :, : e - s, : e - s])
    expected = sum(len(ids) - 1 for ids in poems_ids)
    if count != expected:
        raise AssertionError(f"scored {count} targets, expected {expected}")
    mean = total / count
    return {"nll": round(mean, 6), "ppl": round(float(np.exp(mean)), 4), "targets": count}


def sample(
    params: tiny_gpt.Params, cfg: tiny_gpt.Config, rng: np.random.Generator, *, temperature: float = 1.0
) -> list[int]:
    """Ids of one generated poem from ◆ until ◆ (or MAX_LEN), drawn like ngram.sample_bigram (rng.choice)."""
    ids = [0]
    out: list[int] = []
    while len(out) < MAX_LEN:
        p = tiny_gpt.next_char_probs(params, cfg, ids, temperature=temperature).astype(np.float64)
        nxt = int(rng.choice(len(p), p=p / p.sum()))
        if nxt == 0:
            break
        out.append(nxt)
        ids.append(nxt)
    return out


def load() -> tuple[tiny_gpt.Params, tiny_gpt.Config, dict[str, Any], bytes]:
    """The committed weights (dequantised, as the browser computes with them), checked; raises StaleWeights."""
    meta = artifacts.check_provenance("tiny_gpt")
    blob, _ = artifacts.read("tiny_gpt")
    return weights_format.unpack(blob, meta["layout"]), tiny_gpt.Config(**meta["config"]), meta, blob


def browser_payload() -> dict[str, Any]:
    """What a page embeds for tiny_gpt.js `decodeWeights`: format, config, vocabulary, layout, base64 weights."""
    _, _, meta, blob = load()
    return weights_format.browser_payload(blob, meta["layout"], config=meta["config"], vocab=meta["vocab"])


def compute(split: Any) -> dict[str, Any]:
    from .dataset import vocabulary

    params, cfg, meta, blob = load()
    vocab = vocabulary(split)
    if meta["vocab"] != "".join(vocab):
        raise artifacts.StaleWeights(
            f"the Transformer's vocabulary is not this split's; fix: run `{artifacts.COMMAND['tiny_gpt']}`"
        )
    held = ngram.encode_all(split.held, vocab)
    index = {ch: i for i, ch in enumerate(vocab)}
    scores = head_scores.HeadScores(cfg.n_layers, cfg.n_heads, marks={index["，"], index["。"]})
    t0 = time.process_time()
    metrics = held_out_nll(params, cfg, held, keep_attention=lambda i, ids, att: scores.add(ids, att))
    eval_seconds = time.process_time() - t0
    rng = np.random.default_rng(SAMPLE_SEED)
    samples = ["".join(vocab[i] for i in sample(params, cfg, rng)) for _ in range(SAMPLES)]
    example_ids = [0] + [index.get(ch, 1) for ch in EXAMPLE]
    example = tiny_gpt.forward(params, cfg, example_ids)
    probs = tiny_gpt.log_softmax(example.logits.astype(np.float64))
    example_nll = float(-np.mean([probs[k, t] for k, t in enumerate(example_ids[1:] + [0])]))
    training = meta["training"]
    return {
        "config": meta["config"],
        "n_params": meta["n_params"],
        "held_out": metrics,
        "held_out_by_encoding": meta["held_out"],
        "weights_bytes": len(blob),
        "weights_sha256": meta["weights_sha256"],
        "curve": training["curve"],
        "training": {k: v for k, v in training.items() if k != "curve"},
        "settings": meta["inputs"]["settings"],
        "environment": meta["environment"],
        "samples": samples,
        "heads": {
            "patterns": scores.table(),
            "poems": scores.n_poems,
            "shows_score": head_scores.SHOWS_SCORE,
            "shows_lift": head_scores.SHOWS_LIFT,
        },
        "example": {
            "text": EXAMPLE,
            "chars": [vocab[i] for i in example_ids],
            "attention": np.round(example.attention.astype(np.float64), 4).tolist(),
            "nll": example_nll,
            "held_out": any(EXAMPLE in p for p in split.held),
        },
        "seconds": {"eval": round(eval_seconds, 1)},
    }


def _code_digest() -> str:
    here = Path(__file__).parent
    files = [Path(__file__), here / "head_scores.py", here / "dataset.py", Path(tiny_gpt.__file__)]
    return cachestore.digest(*(cachestore.file_digest(f) for f in files))


def results(options: BuildOptions) -> dict[str, Any]:
    """The Transformer's numbers (cached once per machine, corpus.py `POEM_MODELS`, by the weights, the code and the
    corpus); raises CorpusError, StaleWeights."""
    meta = artifacts.check_provenance("tiny_gpt")
    key = cachestore.digest("tiny-gpt", POEMS_SHA256, meta["weights_sha256"], _code_digest(), str(SAMPLES), EXAMPLE)
    return POEM_MODELS.cached(key, lambda: _computed(options), lock="tiny-gpt")


def _computed(options: BuildOptions) -> dict[str, Any]:
    from .dataset import load_split  # (dataset imports this module's neighbours: loaded when first needed)

    with progress.step("the Tang poems: evaluating and sampling the tiny Transformer"):
        return compute(load_split(options))


__all__ = ["BATCH", "browser_payload", "compute", "held_out_nll", "load", "results", "sample", "windows"]
