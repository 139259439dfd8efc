"""Module 06's maths and widgets: parameter counts against the published totals (and the JS against the Python),
the sinusoidal encoding against a hand computation, and bad widget options reported as path:line."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.param_count import PRESETS, DecoderConfig, count_parameters
from attention_core.positional import offset_similarity, position_similarity, sinusoidal_encoding
from attention_course.widgets.next_token.widget import first_stays
from tests.conftest import ROOT, run_js_module
from tests.plugin_harness import render_snippet

# ------------------------------------------------------------------------------------------ parameter counts


def test_gpt2_small_is_the_released_checkpoints_124_439_808():
    # By hand (HF openai-community/gpt2 config: V 50257, n_ctx 1024, d 768, 12 layers, d_ff 3072, tied head):
    # embeddings 50257·768 + 1024·768 = 38,597,376 + 786,432; per layer attention 4·768² + 4·768 = 2,362,368,
    # MLP 2·768·3072 + 3072 + 768 = 4,722,432, two LayerNorms 4·768 = 3,072 → 7,087,872 × 12 = 85,054,464;
    # final LayerNorm 1,536. Total 124,439,808 — the number torch reports for the checkpoint ("124M").
    counts = count_parameters(PRESETS["gpt2-small"])
    assert counts["embeddings"] == 38_597_376 + 786_432
    assert counts["attention_per_layer"] == 2_362_368 and counts["mlp_per_layer"] == 4_722_432
    assert counts["total"] == 124_439_808
    assert round(counts["total"] / 1e6) == 124


def test_gpt3_175b_rounds_to_the_papers_175b():
    # Brown et al. 2020, Table 2.1: 96 layers, d_model 12288, 96 heads, 175.0B. Per layer 12·d² + 13·d
    # (weights and biases of attention and MLP, two LayerNorms): 96 · (12·12288² + 13·12288) = 173,961,510,912;
    # embeddings (50257 + 2048)·12288 = 642,723,840; final LayerNorm 24,576 → 174,604,259,328.
    total = count_parameters(PRESETS["gpt3-175b"])["total"]
    assert total == 96 * (12 * 12288**2 + 13 * 12288) + (50257 + 2048) * 12288 + 2 * 12288
    assert round(total / 1e9) == 175
    assert abs(total / 175.0e9 - 1) < 0.003  # the page says: less than 0.3 % below the paper's 175.0B


def test_smollm2_135m_rounds_to_135m():
    # HF HuggingFaceTB/SmolLM2-135M config: V 49152, d 576, 30 layers, 9 heads, 3 KV heads (d_head 64),
    # d_ff 1536, SwiGLU, RMSNorm, no biases, tied. Per layer: Q 576·576 + K, V 2·576·192 + O 576·576 = 884,736;
    # MLP 3·576·1536 = 2,654,208; norms 2·576 → 3,540,096 × 30 = 106,202,880; embedding 28,311,552; final 576.
    counts = count_parameters(PRESETS["smollm2-135m"])
    assert counts["attention_per_layer"] == 884_736 and counts["mlp_per_layer"] == 2_654_208
    assert counts["total"] == 134_515_008
    assert round(counts["total"] / 1e6) == 135


def test_gpt3_mlp_is_about_two_thirds_as_the_quiz_says():
    c = count_parameters(PRESETS["gpt3-175b"])
    assert 0.66 < c["mlp"] / c["total"] < 0.67 and (c["embeddings"] + c["norms"]) / c["total"] < 0.01


def test_a_bad_configuration_is_refused():
    with pytest.raises(ValueError, match="divisible by n_heads"):
        count_parameters(DecoderConfig("x", 10, 1, 10, 3, 3, 4, 8))


EDITED = [
    DecoderConfig(
        "a",
        vocab_size=32000,
        n_layers=32,
        d_model=4096,
        n_heads=32,
        n_kv_heads=8,
        d_ffn=14336,
        context_length=8192,
        positions="rope",
        ffn="swiglu",
        norm="rmsnorm",
        bias=False,
        tied_embeddings=False,
    ),
    DecoderConfig(
        "b",
        vocab_size=7,
        n_layers=3,
        d_model=12,
        n_heads=4,
        n_kv_heads=2,
        d_ffn=5,
        context_length=9,
        positions="learned",
        ffn="swiglu",
        norm="layernorm",
        bias=True,
        tied_embeddings=False,
    ),
    DecoderConfig(
        "c",
        vocab_size=100,
        n_layers=2,
        d_model=8,
        n_heads=2,
        n_kv_heads=1,
        d_ffn=16,
        context_length=4,
        positions="sinusoidal",
        ffn="gelu",
        norm="rmsnorm",
        bias=True,
        tied_embeddings=True,
    ),
]


def test_the_widgets_javascript_counts_exactly_like_the_python(tmp_path):
    from attention_core.param_count import config_dict

    configs = [config_dict(c) for c in list(PRESETS.values()) + EDITED]
    script = (
        "import { countParameters } from './param-count.mjs';\n"
        "import fs from 'node:fs';\n"
        "const cfgs = JSON.parse(fs.readFileSync('./data.json', 'utf8'));\n"
        "console.log(JSON.stringify(cfgs.map(countParameters)));"
    )
    js = run_js_module(
        tmp_path,
        {
            "param-count.mjs": ROOT / "attention_course/widgets/param_count/widget.js",
            "common.js": ROOT / "theme/js/widgets/common.js",
        },
        script,
        configs,
    )
    assert js == [count_parameters(c) for c in list(PRESETS.values()) + EDITED]


# --------------------------------------------------------------------------------------- positional encoding


def test_sinusoidal_encoding_matches_the_formula_by_hand():
    # d = 4: frequencies ω_0 = 10000^0 = 1 and ω_1 = 10000^(−2/4) = 0.01. Position 2: [sin 2, cos 2, sin .02, cos .02].
    pe = sinusoidal_encoding(3, 4)
    assert pe[0].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert np.allclose(pe[2], [math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)])


def test_similarity_depends_only_on_the_offset():
    pe = sinusoidal_encoding(20, 16)
    sim = position_similarity(pe)
    offsets = offset_similarity(20, 16)
    for k in range(20):
        assert np.allclose(np.diagonal(sim, k), offsets[k])
    assert offsets[0] == pytest.approx(1.0)


def test_positional_widget_ships_the_same_numbers_as_attention_core():
    import base64
    import json

    from attention_course.widgets.positional_encoding.widget import WIDGET

    options = {**WIDGET.defaults(), "dims": [8, 16], "dim": 16, "positions": 12}
    data, files = WIDGET.build_data(options, None)
    assert list(files) == [data["data"]] and "pe" not in data["encodings"][1]  # the bytes are in the data script
    script = files[data["data"]].decode()
    from builder.bundle import browser_data_prefix

    prefix = browser_data_prefix("positionalEncoding", f"d{data['key']}")
    assert script.startswith(prefix)
    payload = json.loads(script[len(prefix) :].rstrip().rstrip(";"))
    pe = np.frombuffer(base64.b64decode(payload["16"]["pe"]), dtype=np.int8).reshape(12, 16) / data["quant"]
    assert np.abs(pe - sinusoidal_encoding(12, 16)).max() <= 0.5 / 127 + 1e-12  # one byte: half a step at most
    assert np.abs(np.array(payload["16"]["similarity"]) - offset_similarity(12, 16)).max() <= 5e-7  # six decimals
    assert data["encodings"][1]["similarity"] == offset_similarity(12, 16).tolist()  # what the fallback reads


# --------------------------------------------------------------------------------------------- bad options


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "```{widget} param-count\npreset: gpt4\n```\n",
            "content/test.md:2: option 'preset' must be one of gpt2-small, "
            "gpt3-175b, smollm2-135m; got 'gpt4' [widget]",
        ),
        (
            "```{widget} positional-encoding\ndims: [8, 16]\ndim: 64\n```\n",
            "content/test.md:3: option 'dim' (64) must be one of the listed dims (8, 16) [widget]",
        ),
        (
            "```{widget} positional-encoding\ndims:\n  - 8\n  - 9\n```\n",
            "content/test.md:4: option 'dims': every dimension "
            "count must be an even integer from 2 to 256, got 9 [widget]",
        ),
        (
            "```{widget} next-token\ntemperature: 0.25\n```\n",
            "content/test.md:2: option 'temperature' must be one of "
            "0.1, 0.2, … 2.0 (the slider's grid), got 0.25 [widget]",
        ),
        (
            "```{widget} next-token\nprompts:\n  - The cat\n  - ''\n```\n",
            "content/test.md:4: option 'prompts': every prompt must be a non-empty string, got '' [widget]",
        ),
        (
            "```{widget} next-token\nview: both\n```\n",
            "content/test.md:2: option 'view' must be one of predict, lens; got 'both' [widget]",
        ),
    ],
)
def test_bad_options_name_their_line(body, message):
    _, problems = render_snippet(body)
    assert problems == [message]


def test_first_stays_finds_where_the_answer_settles():
    assert first_stays([900, 12, 1, 3, 1, 1], 1) == 4  # rank 1 at 2 but lost again at 3: settles at 4
    assert first_stays([900, 12, 8, 3, 1, 1], 10) == 2
    assert first_stays([5, 1], 1) == 1


def test_the_small_model_spends_a_far_larger_share_on_embeddings_as_the_page_says():
    share = {k: c["embeddings"] / c["total"] for k, c in ((k, count_parameters(p)) for k, p in PRESETS.items())}
    assert share["smollm2-135m"] > 0.2 > 0.01 > share["gpt3-175b"]
