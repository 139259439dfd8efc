"""The three-model table (bigram, MLP, Transformer) of the real poems: its numbers are what the code computes on the
same split, vocabulary and targets. Needs the corpus (fetched once per machine) and the committed weights; on a
cold cache the build's own pass over the held-out poems takes ~1 min of CPU (bigram, MLP, Transformer)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import ngram, tiny_gpt
from attention_course.poems import dataset, lm_table, ngram_lm, train_mlp, transformer_lm, weights_format


@pytest.fixture(scope="module")
def options():
    from builder.model import BuildOptions
    from tests.conftest import ROOT

    return BuildOptions(root=ROOT, cache_dir=None)


@pytest.fixture(scope="module")
def data(options):
    split = dataset.load_split(options)
    vocab = dataset.vocabulary(split)
    return split, vocab, ngram.encode_all(split.held, vocab)


def test_table_numbers_are_the_computed_ones(options, data):
    split, vocab, held = data
    result = lm_table.results(options)
    rows = {r["key"]: r for r in result["models"]}
    n_targets = sum(len(ids) - 1 for ids in held)

    # bigram: counted again here from the training poems
    train = ngram.encode_all(split.train, vocab)
    probs = ngram.bigram_probs(ngram.bigram_counts(train, len(vocab)), ngram_lm.ALPHA)
    hp, hn = ngram.pairs(held)
    assert len(hn) == n_targets
    assert rows["bigram"]["held_nll"] == pytest.approx(ngram.mean_nll(probs, hp, hn), abs=1e-9)
    assert rows["bigram"]["params"] == len(vocab) ** 2

    # MLP: the build's evaluation (ngram_lm) equals what the training command measured on the shipped weights
    model, meta = ngram_lm.load_mlp()
    shipped = meta["held_out"][meta["inputs"]["settings"]["matrices"]]
    assert shipped["targets"] == n_targets
    assert rows["mlp"]["held_nll"] == pytest.approx(shipped["nll"], abs=1e-5)
    assert rows["mlp"]["params"] == sum(p.size for p in model.params()) == meta["n_params"]

    # Transformer: likewise (transformer_lm at build time, train_transformer at training time)
    _, cfg, tmeta, _ = transformer_lm.load()
    shipped = tmeta["held_out"][tmeta["inputs"]["settings"]["matrices"]]
    assert shipped["targets"] == n_targets
    assert rows["transformer"]["held_nll"] == pytest.approx(shipped["nll"], abs=1e-5)
    assert rows["transformer"]["params"] == tiny_gpt.n_params(cfg) == tmeta["n_params"]

    facts = result["facts"]
    for key, row in rows.items():
        assert facts[f"{key}_held_ppl"] == f"{math.exp(row['held_nll']):.0f}"
        assert facts[f"{key}_params"] == f"{row['params']:,}"
    # the story the course tells: each model beats the one before, clearly
    assert rows["transformer"]["held_ppl"] < 0.9 * rows["mlp"]["held_ppl"] < 0.9 * 0.9 * rows["bigram"]["held_ppl"]
    assert result["source"]["package"] == "chinese-poetry@2.0.1" and "traditional" in result["source"]["script"]
    assert result["source"]["converter"] == "opencc 1.4.2 (t2s)"
    # the same seed and temperature wrote the three samples
    assert result["temperature"] == 1.0 and all(row["sample"] for row in rows.values())


def test_held_out_functions_agree_with_plain_forward_passes(data):
    """held_out_nll (batched, windowed) against one plain forward pass per poem, on poems that fit a window; and
    train_mlp's against ngram's own loss."""
    _, _, held = data
    params, cfg, _, _ = transformer_lm.load()
    short = [ids for ids in held if len(ids) - 1 <= cfg.context][:12]
    model, meta = ngram_lm.load_mlp()
    context = meta["inputs"]["settings"]["context"]
    x, y = ngram.contexts(short, context)
    mlp = train_mlp.held_out_nll(dict(zip(train_mlp.ORDER, model.params())), context, short)
    assert mlp["nll"] == pytest.approx(model.loss(x, y), abs=1e-5)
    total = 0.0
    for ids in short:
        logp = tiny_gpt.log_softmax(tiny_gpt.forward(params, cfg, ids[:-1]).logits.astype(np.float64))
        total += -logp[np.arange(len(ids) - 1), ids[1:]].sum()
    got = transformer_lm.held_out_nll(params, cfg, short)
    assert got["nll"] == pytest.approx(total / sum(len(ids) - 1 for ids in short), abs=1e-6)


def test_worked_example_is_held_out_and_the_facts_say_so(options):
    r = ngram_lm.results(options)
    assert r["worked_held_out"] is True and r["facts"]["worked_held_out"] == "是"
    assert r["facts"]["worked_line"] == "白日依山尽"
    tf = transformer_lm.results(options)
    assert tf["example"]["held_out"] is True


def test_shipped_weights_decode_to_what_python_computes_with():
    params, _, meta, blob = transformer_lm.load()
    again = weights_format.unpack(blob, meta["layout"])
    assert all(np.array_equal(params[k], again[k]) for k in params)
    payload = transformer_lm.browser_payload()
    assert payload["format"] == weights_format.FORMAT and payload["vocab"] == meta["vocab"]
