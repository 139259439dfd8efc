"""attention_core.models: the GGUF reader and the NumPy Llama forward pass on the real SmolLM2-135M.

The golden test compares with Hugging Face transformers' LlamaForCausalLM (float32, eager attention) on
the same GGUF, made by tests/course/fixtures/smollm2/make_golden.py; that implementation undoes llama.cpp's
Q/K row permutation itself and uses rotate-half RoPE, while ours keeps the permuted rows and rotates
adjacent pairs, so the RoPE-layout reasoning is under test too.  Measured max abs differences when it was
written: logits 5.7e-5, attention weights 4.0e-6.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import softmax

PARAGRAPH = (
    "The sun rose slowly over the quiet village. Farmers walked to their fields, children ran to school, "
    "and the baker opened his shop. By noon the streets were busy with people buying bread, fruit and "
    "vegetables at the market."
)
TIRED = "The animal didn't cross the street because it was tired"
WIDE = "The animal didn't cross the street because it was too wide"


@pytest.fixture(scope="module")
def france(smollm2):
    return smollm2.run("The capital of France is", return_residuals=True)


def test_config_comes_from_the_metadata(smollm2, smollm2_metadata) -> None:
    meta = smollm2_metadata
    c = smollm2.config
    assert (c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.d_ffn, c.vocab_size) == (
        meta["llama.block_count"],
        meta["llama.embedding_length"],
        meta["llama.attention.head_count"],
        meta["llama.attention.head_count_kv"],
        meta["llama.feed_forward_length"],
        meta["llama.vocab_size"],
    )
    assert (c.n_layers, c.d_model, c.n_heads, c.n_kv_heads, c.head_dim, c.d_ffn, c.vocab_size) == (
        30,
        576,
        9,
        3,
        64,
        1536,
        49152,
    )  # SmolLM2-135M's model card
    assert c.group_size == 3 and c.rope_theta == 100000.0 and c.rope_dim == 64
    assert c.rms_eps == pytest.approx(1e-5) and c.tied_embeddings


def test_weights_are_float32_and_tied(smollm2) -> None:
    w = smollm2.weights
    assert w.lm_head is w.token_embedding and w.rope_layout == "interleaved"
    arrays = [w.token_embedding, w.final_norm] + [a for layer in w.layers for a in vars(layer).values()]
    assert {a.dtype for a in arrays} == {np.dtype(np.float32)}
    assert all(a.flags.c_contiguous and a.flags.owndata for a in arrays)  # no views into the file
    assert 530e6 < w.nbytes() < 545e6  # 134.5 M parameters × 4 bytes
    assert len(w.layers) == 30 and w.layers[0].w_k.shape == (192, 576) and w.layers[0].w_down.shape == (576, 1536)
    assert np.isfinite(w.token_embedding).all()


def test_interleaved_rope_on_gguf_rows_equals_rotate_half_on_hf_rows(smollm2) -> None:
    """Why the GGUF's permuted Q/K rows need no un-permuting: scores are the same either way.

    Written independently of llama.py's apply_rope: HF-style rotate-half RoPE on rows put back in HF
    order by `unpermute_rope_rows`, versus our `apply_rope` on the rows as stored."""
    from attention_core.models.gguf_reader import unpermute_rope_rows
    from attention_core.models.llama import apply_rope, rope_cos_sin, split_heads

    cfg, layer = smollm2.config, smollm2.weights.layers[3]
    x = np.random.default_rng(0).standard_normal((7, cfg.d_model)).astype(np.float32)
    cos, sin = rope_cos_sin(7, cfg.head_dim, cfg.rope_theta)
    ours_q = apply_rope(split_heads(x @ layer.w_q.T, cfg.n_heads), cos, sin)
    ours_k = apply_rope(split_heads(x @ layer.w_k.T, cfg.n_kv_heads), cos, sin)

    def rotate_half_rope(v):  # transformers' apply_rotary_pos_emb
        c, s = np.concatenate([cos, cos], -1), np.concatenate([sin, sin], -1)
        half = v.shape[-1] // 2
        rotated = np.concatenate([-v[..., half:], v[..., :half]], -1)
        return v * c + rotated * s

    hf_q = rotate_half_rope(split_heads(x @ unpermute_rope_rows(layer.w_q, cfg.n_heads).T, cfg.n_heads))
    hf_k = rotate_half_rope(split_heads(x @ unpermute_rope_rows(layer.w_k, cfg.n_kv_heads).T, cfg.n_kv_heads))
    ours = ours_q @ np.repeat(ours_k, 3, axis=0).transpose(0, 2, 1)
    hf = hf_q @ np.repeat(hf_k, 3, axis=0).transpose(0, 2, 1)
    assert np.abs(ours - hf).max() < 1e-4 * np.abs(hf).max()
    assert not np.allclose(ours_q, hf_q)  # the vectors themselves differ (order), only the dot products agree


def test_attention_is_causal_normalised_and_deterministic(smollm2, france) -> None:
    a = france.attention
    t = len(france.tokens)
    assert a.shape == (30, 9, t, t) and a.dtype == np.float32
    assert np.abs(a.sum(axis=-1) - 1).max() < 1e-5
    assert (a >= 0).all()
    assert (a[..., np.triu_indices(t, 1)[0], np.triu_indices(t, 1)[1]] == 0).all()  # exactly 0, not ≈0
    assert (a[..., 0, 0] == 1).all()  # the first token can only look at itself
    again = smollm2.run("The capital of France is", return_residuals=True)
    assert np.array_equal(again.logits, france.logits) and np.array_equal(again.attention, france.attention)
    assert np.array_equal(again.residuals, france.residuals)


def test_residual_stream_and_logit_lens_shapes(smollm2, france) -> None:
    from attention_core.models.llama import rms_norm

    w, r = smollm2.weights, france.residuals
    assert r.shape == (31, len(france.tokens), 576)
    assert np.array_equal(r[0], w.token_embedding[france.tokens])
    lens = rms_norm(r[-1], w.final_norm, w.config.rms_eps) @ w.lm_head.T
    assert np.array_equal(lens, france.logits)
    assert smollm2.run("The capital of France is").residuals is None


def test_paris(smollm2, france) -> None:
    """Measured: P(" Paris") = 0.773, then " the" 0.065, " London" 0.012."""
    probs = france.next_token_probs()
    top = int(np.argmax(probs))
    assert smollm2.tokenizer.token_string(top) == " Paris"
    assert 0.5 < probs[top] < 0.95
    assert probs.sum() == pytest.approx(1, abs=1e-5)


def test_perplexity_of_plain_english_is_sane(smollm2) -> None:
    """Measured: 29.7 on PARAGRAPH (45 tokens); random tokens: ~5e5 (the vocabulary is 49,152)."""
    from attention_core.models.llama import perplexity

    ppl = smollm2.perplexity(PARAGRAPH)
    assert 5 < ppl < 60, ppl
    noise = np.random.default_rng(0).integers(1000, 10000, 40).tolist()
    assert perplexity(smollm2.weights, noise) > 1000


def test_matches_hugging_face_transformers(smollm2, golden) -> None:
    from attention_core.models.llama import forward

    layers, subset = golden["attention_layers"], golden["vocab_subset"]
    assert len(subset) == 200 and list(layers) == [0, 4, 14, 29]
    for s, text in enumerate(golden["sentences"]):
        ids = golden[f"s{s}_ids"].tolist()
        assert smollm2.encode(str(text)) == ids
        r = forward(smollm2.weights, ids)
        assert np.abs(r.logits[:, subset] - golden[f"s{s}_logits_subset"]).max() <= 1e-3
        top_ids = golden[f"s{s}_top_ids"]
        assert np.abs(np.take_along_axis(r.logits, top_ids, -1) - golden[f"s{s}_top_logits"]).max() <= 1e-3
        assert (np.argmax(r.logits, axis=-1) == top_ids[:, 0]).all()
        assert np.abs(r.attention[layers] - golden[f"s{s}_attention"]).max() <= 1e-3


def test_the_issue_example_layer4_head2(smollm2) -> None:
    """Issue 14's claim, measured (0-based layer 4, head 2; every word here is one token, so no aggregation):

    tired → animal 0.269, street 0.074;  wide → street 0.456, animal 0.131.
    Positions: animal 1, street 6, it 8, tired 10 / too 10, wide 11.
    The `it` row is the same in both sentences (causal: nothing after `it` can reach it) — up to float32
    rounding (measured ≤ 3e-6), because BLAS blocks an 11-row and a 12-row matrix product differently."""
    tk = smollm2.tokenizer
    a, b = smollm2.run(TIRED), smollm2.run(WIDE)
    sa, sb = tk.token_strings(a.tokens), tk.token_strings(b.tokens)
    assert (sa[1], sa[6], sa[8], sa[10]) == (" animal", " street", " it", " tired")
    assert (sb[10], sb[11]) == (" too", " wide") and len(sb) == 12
    ha, hb = a.attention[4, 2], b.attention[4, 2]
    assert ha[10, 1] == pytest.approx(0.27, abs=0.01) and ha[10, 6] == pytest.approx(0.07, abs=0.01)
    assert hb[11, 6] == pytest.approx(0.46, abs=0.01) and hb[11, 1] == pytest.approx(0.13, abs=0.01)
    assert np.abs(a.attention[:, :, 8, :9] - b.attention[:, :, 8, :9]).max() < 1e-5
    assert np.abs(a.logits[:9] - b.logits[:9]).max() < 1e-3


def test_bad_input_is_refused(smollm2) -> None:
    from attention_core.models.llama import forward

    with pytest.raises(ValueError, match="at least one token"):
        forward(smollm2.weights, [])
    with pytest.raises(ValueError, match="token ids"):
        forward(smollm2.weights, [49152])


def test_softmax_is_the_courses_own() -> None:
    """llama.py reuses attention_core.softmax: a masked (-inf) score gets weight exactly 0."""
    w = softmax(np.array([0.0, -np.inf, 1.0], dtype=np.float32))
    assert w.dtype == np.float32 and w[1] == 0.0


def test_models_run_without_gguf_and_tokenizers() -> None:
    """The browser case: no gguf, no tokenizers. The package imports and the forward pass runs on weights
    built in memory (here a tiny random 2-layer model with 4 query heads sharing 2 KV heads)."""
    import subprocess
    import sys

    from tests.course.conftest import ROOT

    code = """
import sys
sys.modules["gguf"] = None; sys.modules["tokenizers"] = None   # any import of them now fails
import numpy as np
from attention_core.models import LayerWeights, LlamaConfig, LlamaWeights, forward
cfg = LlamaConfig(n_layers=2, d_model=16, n_heads=4, n_kv_heads=2, head_dim=4, d_ffn=24, vocab_size=50,
                  context_length=64, rope_theta=10000.0, rope_dim=4, rms_eps=1e-5, tied_embeddings=True)
rng = np.random.default_rng(0)
m = lambda *s: rng.standard_normal(s).astype(np.float32) * 0.3
layers = [LayerWeights(np.ones(16, np.float32), m(16, 16), m(8, 16), m(8, 16), m(16, 16), np.ones(16, np.float32),
                       m(24, 16), m(24, 16), m(16, 24)) for _ in range(2)]
emb = m(50, 16)
r = forward(LlamaWeights(cfg, emb, layers, np.ones(16, np.float32), emb), [3, 1, 4, 1, 5])
assert r.logits.shape == (5, 50) and r.attention.shape == (2, 4, 5, 5)
assert np.allclose(r.attention.sum(-1), 1, atol=1e-6) and (np.triu(r.attention[1, 3], 1) == 0).all()
try:
    from attention_core.models import load_model
    load_model("x.gguf")
except ImportError as e:
    assert "pip install gguf==0.19.0" in str(e), e
else:
    raise AssertionError("load_model worked without gguf")
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
