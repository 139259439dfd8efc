"""The Tang poems as the hands-on module's training loop reads them in the browser: the files of the browser package
`tang_poems` (attention_course/browser/tang_poems/), made at build time from the course's split (dataset.py).

A documented slice, so that the page downloads about a megabyte rather than five and an evaluation takes seconds in
the browser, with module 04's vocabulary and split unchanged:

- training text: every `TRAIN_EVERY`-th training poem (package order), as one id stream ◆ poem ◆ poem … ◆
  (uint16, little-endian) — a two-minute run sees a fraction of it once;
- held-out poems: every `HELD_EVERY`-th held-out poem, each scored alone from its opening ◆ to its closing ◆, the
  same targets as module 04 and module 07 score.

`facts.json` holds the counts of the slice and the perplexities of the course's three models — bigram, MLP and the
Transformer of module 07 — on exactly those held-out poems, so the learner's model is placed beside them on the same
characters (their whole-set perplexities are module 07's table).

Cached once per machine (corpus.py `POEM_MODELS`) under a digest of the corpus, the code and the weights.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from attention_core import ngram, tiny_gpt, training
from builder import cache as cachestore
from builder import progress
from builder.model import BuildOptions

from . import artifacts, dataset, ngram_lm, transformer_lm
from .corpus import POEM_MODELS, POEMS_SHA256

TRAIN_EVERY = 4
HELD_EVERY = 12
FILES = ("vocab.txt", "train.u16", "held.u16", "facts.json")


def _ids_bytes(stream: np.ndarray) -> bytes:
    if stream.max(initial=0) >= 2**16:
        raise ValueError("a token id does not fit in 16 bits")
    return stream.astype("<u2").tobytes()


def compute(split: dataset.Split) -> dict[str, bytes]:
    vocab = dataset.vocabulary(split)
    V = len(vocab)
    train_all = ngram.encode_all(split.train, vocab)
    held_all = ngram.encode_all(split.held, vocab)
    train = train_all[::TRAIN_EVERY]
    held = held_all[::HELD_EVERY]
    # one stream ◆ poem ◆ poem … ◆: each poem's ids (ngram.encode_all: ◆ … ◆) share their ◆ with the next
    stream = np.concatenate([np.zeros(1, dtype=np.int64)] + [ids[1:] for ids in train])
    held_stream = np.concatenate([np.zeros(1, dtype=np.int64)] + [ids[1:] for ids in held])
    targets = int(sum(len(ids) - 1 for ids in held))

    # the bigram, counted on all training poems (module 04's), scored on the slice
    counts = ngram.bigram_counts(train_all, V)
    probs = ngram.bigram_probs(counts, ngram_lm.ALPHA)
    hp, hn = ngram.pairs(held)
    bigram = ngram.mean_nll(probs, hp, hn)
    unigram = float(-np.log(ngram.unigram_probs(counts, ngram_lm.ALPHA)[hn]).mean())
    # the MLP and the Transformer: their committed weights, as module 04 and module 07 score them
    mlp, mlp_meta = ngram_lm.load_mlp()
    xh, yh = ngram.contexts(held, mlp_meta["inputs"]["settings"]["context"])
    mlp_nll = float(-ngram.log_softmax(mlp.logits(xh).astype(np.float64))[np.arange(len(yh)), yh].mean())
    params, cfg, tf_meta, _ = transformer_lm.load()
    tf = transformer_lm.held_out_nll(params, cfg, held)
    mlp_settings = mlp_meta["inputs"]["settings"]
    models = {
        "unigram": {"nll": unigram},
        "bigram": {"nll": bigram, "params": V * V, "positions_seen": int(sum(len(ids) - 1 for ids in train_all))},
        "mlp": {
            "nll": mlp_nll,
            "params": int(sum(p.size for p in mlp.params())),
            "positions_seen": int(mlp_settings["steps"] * mlp_settings["batch"]),
            "context": int(mlp_settings["context"]),
        },
        "transformer": {
            "nll": float(tf["nll"]),
            "params": int(tiny_gpt.n_params(cfg)),
            "positions_seen": int(tf_meta["training"]["tokens_seen"]),
            "context": int(cfg.context),
        },
    }
    for m in models.values():
        m["ppl"] = round(float(np.exp(m["nll"])), 2)
        m["nll"] = round(float(m["nll"]), 5)
    facts = {
        "vocab": V,
        "train_every": TRAIN_EVERY,
        "held_every": HELD_EVERY,
        "train_poems": len(train),
        "train_poems_all": len(train_all),
        "train_tokens": int(len(stream)),
        "held_poems": len(held),
        "held_poems_all": len(held_all),
        "held_targets": targets,
        "models": models,
    }
    if tf["targets"] != targets:
        raise AssertionError(f"the Transformer scored {tf['targets']} targets of {targets}")
    return {
        "vocab.txt": "\n".join(vocab).encode("utf-8") + b"\n",
        "train.u16": _ids_bytes(stream),
        "held.u16": _ids_bytes(held_stream),
        "facts.json": json.dumps(facts, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8") + b"\n",
    }


def _code_digest() -> str:
    files = [Path(__file__), Path(dataset.__file__), Path(ngram.__file__), Path(training.__file__)]
    return cachestore.digest(*(cachestore.file_digest(f) for f in files))


def package_files(options: BuildOptions) -> dict[str, bytes]:
    """The files of the browser package `tang_poems` (course.add_browser_package's `data`); raises CorpusError,
    StaleWeights."""
    mlp_sha = artifacts.check_provenance("mlp")["weights_sha256"]
    tf_sha = artifacts.check_provenance("tiny_gpt")["weights_sha256"]
    key = cachestore.digest(
        "tang-poems-browser", POEMS_SHA256, _code_digest(), mlp_sha, tf_sha, str(TRAIN_EVERY), str(HELD_EVERY)
    )
    found: dict[str, Any] = POEM_MODELS.cached(key, lambda: _computed(options), lock="browser-data")
    return {name: found[name] for name in FILES}


def _computed(options: BuildOptions) -> dict[str, bytes]:
    with progress.step("the Tang poems: the hands-on module's slice and the models' perplexity on it"):
        return compute(dataset.load_split(options))


__all__ = ["FILES", "HELD_EVERY", "TRAIN_EVERY", "compute", "package_files"]
