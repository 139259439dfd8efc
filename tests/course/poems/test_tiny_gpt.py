"""attention_core.tiny_gpt: the forward pass is the course's attention, the hand-written backward pass agrees with
finite differences, and training is deterministic."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import activations, tiny_gpt
from attention_core.core import causal_mask, multi_head_attention

SMALL = tiny_gpt.Config(vocab_size=11, context=6, d_model=8, n_layers=2, n_heads=2, d_ff=12)


def perturbed(cfg: tiny_gpt.Config, seed: int = 3, dtype=np.float64) -> tiny_gpt.Params:
    """Parameters away from their initial values (gains ≠ 1, biases ≠ 0), so every term of the backward counts."""
    rng = np.random.default_rng(seed)
    return {
        k: (v.astype(np.float64) + rng.normal(0, 0.3, v.shape)).astype(dtype)
        for k, v in tiny_gpt.init_params(cfg, seed=seed).items()
    }


def test_gradients_match_finite_differences():
    p = perturbed(SMALL)
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 11, (3, 6)), rng.integers(0, 11, (3, 6))
    loss, grads = tiny_gpt.loss_and_grads(p, SMALL, x, y)
    assert loss == pytest.approx(tiny_gpt.loss(p, SMALL, x, y), abs=1e-12)
    assert set(grads) == set(tiny_gpt.param_names(SMALL))
    h = 1e-5
    for name, a in p.items():
        numeric = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + h
            up = tiny_gpt.loss(p, SMALL, x, y)
            a[idx] = old - h
            down = tiny_gpt.loss(p, SMALL, x, y)
            a[idx] = old
            numeric[idx] = (up - down) / (2 * h)
        err = np.abs(numeric - grads[name]).max() / max(np.abs(numeric).max(), 1e-8)
        assert err < 1e-6, (name, err)


def test_pieces_backward_match_finite_differences():
    rng = np.random.default_rng(1)
    x, g, dy = rng.normal(size=(4, 5)), rng.normal(size=5), rng.normal(size=(4, 5))
    dx, dg = tiny_gpt.rms_norm_backward(dy, x, g, 1e-5)
    f = lambda x_, g_: float((tiny_gpt.rms_norm(x_, g_, 1e-5) * dy).sum())  # noqa: E731
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        assert (f(x + e, g) - f(x - e, g)) / 2e-6 == pytest.approx(dx[i], abs=1e-7)
    for i in range(5):
        e = np.zeros(5)
        e[i] = 1e-6
        assert (f(x, g + e) - f(x, g - e)) / 2e-6 == pytest.approx(dg[i], abs=1e-7)
    z = np.linspace(-6, 6, 49)
    assert np.allclose(tiny_gpt.gelu(z), activations.gelu_tanh(z), atol=1e-12)
    assert np.allclose(tiny_gpt.gelu_grad(z), activations.gelu_tanh_grad(z), atol=1e-12)
    assert tiny_gpt.gelu(z.astype(np.float32)).dtype == np.float32


def test_forward_is_the_course_attention_and_causal():
    p = perturbed(SMALL, dtype=np.float32)
    ids = [0, 3, 5, 7, 2]
    out = tiny_gpt.forward(p, SMALL, ids)
    assert out.logits.shape == (5, 11) and out.attention.shape == (2, 2, 5, 5)
    x = p["tok"][ids] + p["pos"][:5]
    normed = tiny_gpt.rms_norm(x, p["l0.norm1"], SMALL.eps)
    _, weights = multi_head_attention(normed, p["l0.wq"], p["l0.wk"], p["l0.wv"], p["l0.wo"], 2, mask=causal_mask(5))
    assert np.allclose(out.attention[0], weights, atol=1e-6)
    assert np.allclose(out.attention.sum(axis=-1), 1, atol=1e-5)
    assert np.all(out.attention[..., ~causal_mask(5)] == 0)
    # a later character changes nothing before it
    other = tiny_gpt.forward(p, SMALL, [0, 3, 5, 7, 9])
    assert np.allclose(other.logits[:4], out.logits[:4], atol=1e-5)
    batch = tiny_gpt.forward(p, SMALL, np.array([ids, ids]))
    assert np.allclose(batch.logits[1], out.logits, atol=1e-5)
    with pytest.raises(ValueError, match="1 <= T <= 6"):
        tiny_gpt.forward(p, SMALL, list(range(7)))


def _train(seed: int, steps: int = 3) -> tiny_gpt.Params:
    cfg = tiny_gpt.Config(vocab_size=13, context=8, d_model=16, n_layers=2, n_heads=4, d_ff=32)
    p = tiny_gpt.init_params(cfg, seed=seed)
    opt = tiny_gpt.AdamW(lr=1e-2)
    rng = np.random.default_rng(seed)
    for step in range(1, steps + 1):
        x = rng.integers(0, 13, (4, 8))
        _, g = tiny_gpt.loss_and_grads(p, cfg, x, np.roll(x, -1, axis=1))
        tiny_gpt.clip_gradients(g, 1.0)
        opt.update(p, g, tiny_gpt.lr_at(step, peak=1e-2, warmup=1, total=steps))
    return p


def test_training_is_deterministic():
    a, b, c = _train(0), _train(0), _train(1)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert all(a[k].dtype == np.float32 for k in a)
    assert not np.array_equal(a["l0.wq"], c["l0.wq"])


def test_param_count_and_schedule():
    cfg = tiny_gpt.Config(vocab_size=2002)
    d, f, L = 128, 512, 4
    assert tiny_gpt.n_params(cfg) == 2002 * d + 64 * d + L * (2 * d + 4 * d * d + 2 * d * f + f + d) + d + 2002
    assert tiny_gpt.lr_at(0, peak=1.0, warmup=10, total=100) == 0
    assert tiny_gpt.lr_at(10, peak=1.0, warmup=10, total=100) == pytest.approx(1.0)
    assert tiny_gpt.lr_at(100, peak=1.0, warmup=10, total=100) == pytest.approx(0.1)
