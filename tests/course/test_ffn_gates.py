"""SwiGLU gates of the real SmolLM2-135M: `llama.ffn_gates` recomputed from the forward pass's own residual stream,
the FFN width read from the GGUF metadata, and the statistics the `ffn-gate` widget shows."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.activations import silu
from attention_core.core import causal_mask
from attention_core.models.llama import ffn_gates, forward, grouped_query_attention, rms_norm, rope_cos_sin

TEXT = "The animal didn't cross the street because it was tired."


def test_ffn_width_is_the_metadata_s_and_eight_thirds_of_d(smollm2, smollm2_metadata) -> None:
    meta = smollm2_metadata
    assert smollm2.config.d_ffn == meta["llama.feed_forward_length"] == 1536
    assert smollm2.config.d_model == meta["llama.embedding_length"] == 576  # 8/3 · 576 = 1536: SwiGLU's ⅔ · 4d
    layer = smollm2.weights.layers[0]
    assert layer.w_gate.shape == layer.w_up.shape == (1536, 576) and layer.w_down.shape == (576, 1536)


def test_gates_are_what_the_forward_pass_feeds_silu(smollm2) -> None:
    weights, cfg = smollm2.weights, smollm2.config
    ids = smollm2.encode(TEXT)
    gates = ffn_gates(weights, ids)
    assert gates.shape == (cfg.n_layers, len(ids), cfg.d_ffn) and gates.dtype == np.float32
    residuals = forward(weights, ids, return_residuals=True).residuals  # [n] = the stream entering block n
    cos, sin = rope_cos_sin(len(ids), cfg.rope_dim, cfg.rope_theta)
    for n in (0, 11, cfg.n_layers - 1):
        layer = weights.layers[n]
        x = residuals[n]
        x = (
            x
            + grouped_query_attention(
                rms_norm(x, layer.attn_norm, cfg.rms_eps), layer, cfg, cos, sin, causal_mask(len(ids))
            )[0]
        )
        expected = rms_norm(x, layer.ffn_norm, cfg.rms_eps) @ layer.w_gate.T
        np.testing.assert_allclose(gates[n], expected, rtol=0, atol=1e-5)
        # and the block's output is the residual after it: x + down(silu(gate) ⊙ up)
        normed = rms_norm(x, layer.ffn_norm, cfg.rms_eps)
        after = x + (silu(gates[n]).astype(np.float32) * (normed @ layer.w_up.T)) @ layer.w_down.T
        np.testing.assert_allclose(after, residuals[n + 1], rtol=0, atol=2e-3)


def test_gate_stats_count_what_they_say(smollm2) -> None:
    from attention_course import smollm2 as real_model
    from builder.model import BuildOptions

    stats = real_model.ffn_gate_stats(BuildOptions(python_runtime=False), TEXT)
    gates = ffn_gates(smollm2.weights, smollm2.encode(TEXT)).astype(np.float64)
    assert (stats.d_model, stats.d_ffn, stats.n_layers) == (576, 1536, 30)
    assert len(stats.tokens) == gates.shape[1]
    for n in (0, 12, 29):
        assert stats.negative[n] == pytest.approx(float((gates[n] < 0).mean()), abs=1e-12)
        assert stats.near_zero[n] == pytest.approx(
            float((np.abs(silu(gates[n])) < stats.near_zero_limit).mean()), abs=1e-12
        )
        assert sum(stats.histogram[n]) == gates.shape[1] * 1536  # every gate value is in exactly one bin
        lo, hi, count = stats.bins
        below_zero_bins = int(round((0 - lo) / ((hi - lo) / count)))  # bins left of 0 hold exactly the negatives
        assert sum(stats.histogram[n][:below_zero_bins]) == int((gates[n] < 0).sum())
