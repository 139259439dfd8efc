"""The two training commands' loops, on made-up poems and tiny settings: the same seed gives the same weights,
another seed others, and the loss goes down."""

from __future__ import annotations

import numpy as np

from attention_core import ngram
from attention_course.poems import train_mlp, train_transformer

POEMS = [
    "白日依山尽，黄河入海流。欲穷千里目，更上一层楼。",
    "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
    "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。",
    "千山鸟飞绝，万径人踪灭。孤舟蓑笠翁，独钓寒江雪。",
    "空山不见人，但闻人语响。返景入深林，复照青苔上。",
    "移舟泊烟渚，日暮客愁新。野旷天低树，江清月近人。",
]
VOCAB = ngram.build_vocab(POEMS, 200)
IDS = ngram.encode_all(POEMS, VOCAB)


def tiny_transformer_settings(seed: int) -> dict:
    s = dict(train_transformer.SETTINGS)
    s.update(
        config={"context": 16, "d_model": 16, "n_layers": 2, "n_heads": 2, "d_ff": 32},
        steps=12,
        batch=4,
        warmup=2,
        eval_every=6,
        eval_windows=4,
        seed=seed,
    )
    return s


def test_transformer_training_is_deterministic_and_learns():
    a, rec = train_transformer.train(IDS[:4], IDS[4:], len(VOCAB), tiny_transformer_settings(0))
    b, _ = train_transformer.train(IDS[:4], IDS[4:], len(VOCAB), tiny_transformer_settings(0))
    c, _ = train_transformer.train(IDS[:4], IDS[4:], len(VOCAB), tiny_transformer_settings(1))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["l0.wq"], c["l0.wq"])
    assert rec["curve"]["steps"] == [0, 6, 12] and rec["curve"]["train"][-1] < rec["curve"]["train"][0]
    assert rec["tokens_seen"] == 12 * 4 * 16


def test_windows_start_at_poems_or_anywhere():
    stream, starts = train_transformer.stream_of(IDS)
    assert stream[0] == 0 and len(stream) == 1 + sum(len(ids) - 1 for ids in IDS)
    assert list(starts) == [0] + list(np.cumsum([len(ids) - 1 for ids in IDS])[:-1])
    x, y = train_transformer.sample_windows(np.random.default_rng(0), stream, starts, 50, 16, 1.0)
    assert np.all(x[:, 0] == 0) and np.array_equal(x[:, 1:], y[:, :-1])


def test_mlp_training_is_deterministic_and_learns():
    s = dict(train_mlp.SETTINGS, steps=30, batch=16, eval_every=10, eval_size=40, hidden=16, dim=8)
    a, rec = train_mlp.train(IDS[:4], IDS[4:], len(VOCAB), s)
    b, _ = train_mlp.train(IDS[:4], IDS[4:], len(VOCAB), s)
    assert all(np.array_equal(p, q) for p, q in zip(a.params(), b.params()))
    assert rec["curve"]["train"][-1] < rec["curve"]["train"][0]
