"""The real-model facts of content/qkv-explained.md: SmolLM2-135M's sizes read from its GGUF metadata and the KV
cache per token by hand, the queries and keys of `layer_queries_keys` reproducing the forward pass's attention,
the qk-vectors widget's weights being the model's own, and bad options of both widgets reported at their line."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from attention_core.core import causal_mask, softmax
from attention_core.models.llama import forward, layer_queries_keys
from attention_core.models.sentences import get_sentence
from attention_course import smollm2 as real_model
from builder.model import BuildOptions
from tests.conftest import ROOT, TEST_CACHE
from tests.plugin_harness import render_page

OPTIONS = BuildOptions(root=ROOT, cache_dir=TEST_CACHE, python_runtime=False)
DATA_RE = re.compile(r'<script type="application/json" class="widget-data">(.*?)</script>', re.S)
PAGE = (ROOT / "content" / "qkv-explained.md").read_text(encoding="utf-8")


def widget(kind: str, body: str) -> tuple[dict, str, list[str]]:
    html, problems, _ = render_page(f"```{{widget}} {kind}\n{body}```\n", cache_dir=TEST_CACHE)
    return (json.loads(DATA_RE.search(html).group(1)) if not problems else {}), html, problems


def test_smollm2_sizes_from_the_gguf_and_its_kv_cache_by_hand() -> None:
    cfg = real_model.model_config(OPTIONS)
    # llama.block_count, head_count, head_count_kv, embedding_length / head_count (the model card's sizes)
    assert (cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.head_dim, cfg.d_model) == (30, 9, 3, 64, 576)
    data, html, problems = widget("kv-cache", "model: SmolLM2-135M\ndtype: float16\n")
    assert problems == []
    smol = data["presets"][0]
    # by hand: 30 layers × 2 (K, V) × 3 KV heads × 64 dims × 2 bytes = 23,040 bytes = 22.5 KiB per token;
    # without GQA (9 heads): 69,120; × 8192 tokens = 188,743,680 bytes = 180.0 MiB
    assert smol["bytes_per_token"] == 23_040
    assert data["quotes"]["SmolLM2-135M 每token"] == "23,040 字节"
    assert data["quotes"]["SmolLM2-135M 无GQA"] == "69,120 字节"
    assert data["context"] == cfg.context_length == 8192
    assert data["quotes"]["SmolLM2-135M 上下文"] == "180.0 MiB"
    assert "23,040 字节" in html  # the static table
    # the reader sees the model the course runs, named truly; the preset's id (option, quotes) stays short
    assert smol["name"] == "SmolLM2-135M" and smol["label"] == "SmolLM2-135M-Instruct"
    assert '<th scope="row">SmolLM2-135M-Instruct</th>' in html and "构建" not in html


def test_the_quizzes_facts_are_the_models() -> None:
    """The GQA quiz says 9 query heads, 3 KV groups, head 5 → group 1 (quiz YAML cannot quote data: checked here)."""
    cfg = real_model.model_config(OPTIONS)
    assert "9 个查询头、3 组 K/V" in PAGE and (cfg.n_heads, cfg.n_kv_heads) == (9, 3)
    assert 5 // cfg.group_size == 1


def test_layer_queries_keys_give_the_forward_passs_attention(smollm2) -> None:
    ids = smollm2.encode(get_sentence("animal-tired").text)
    attention = forward(smollm2.weights, ids).attention
    cfg = smollm2.config
    for layer in (0, 4):
        q, k = layer_queries_keys(smollm2.weights, ids, layer)
        assert q.shape == (cfg.n_heads, len(ids), cfg.head_dim) and k.shape == (cfg.n_kv_heads, len(ids), cfg.head_dim)
        for h in range(cfg.n_heads):
            scores = q[h] @ k[h // cfg.group_size].T / np.sqrt(cfg.head_dim)  # query head h uses KV head h // 3
            w = softmax(np.where(causal_mask(len(ids)), scores, -np.inf), axis=-1)
            assert np.abs(w - attention[layer, h]).max() < 1e-5
    # the wrong grouping (head h with KV head h % 3) does not give the model's attention
    q, k = layer_queries_keys(smollm2.weights, ids, 4)
    wrong = softmax(np.where(causal_mask(len(ids)), q[1] @ k[1].T / 8, -np.inf), axis=-1)
    assert np.abs(wrong - attention[4, 1]).max() > 0.05
    with pytest.raises(ValueError, match="layer must be"):
        layer_queries_keys(smollm2.weights, ids, cfg.n_layers)


def test_the_qk_vectors_weights_are_the_models_attention() -> None:
    data, html, problems = widget("qk-vectors", "sentence: animal-tired\nlayer: 4\nkv_head: 0\nhead: 2\nquery: it\n")
    assert problems == []
    run = real_model.sentence_run(OPTIONS, get_sentence("animal-tired").text)
    assert [p["head"] for p in data["heads"]] == [0, 1, 2] and len(data["k"]) == run.length
    for p in data["heads"]:
        model = run.matrix(4, p["head"])
        for i, row in enumerate(p["percents"]):
            assert sum(row) == 100
            # the same weights rounded the same way; float64 here, float32 in the forward pass: a tie may differ by 1
            assert max(abs(a - b) for a, b in zip(row, model[i][: i + 1])) <= 1
    it = data["words"].index("it")
    assert data["quotes"]["头2 it→animal"] == f"{data['heads'][2]['percents'][it][1]}%"
    assert 0.5 < data["kept"] <= 1
    assert "it" in html and "分数" in html


@pytest.mark.parametrize(
    "kind, body, line, message",
    [
        ("qk-vectors", "layer: 40\n", 2, "option 'layer' must be between 0 and 29"),
        ("qk-vectors", "kv_head: 3\n", 2, "option 'kv_head' must be between 0 and 2"),
        (
            "qk-vectors",
            "kv_head: 0\nhead: 5\n",
            3,
            "option 'head' must be one of the query heads that use key head 0 (0, 1, 2)",
        ),
        ("qk-vectors", "query: zebra\n", 2, "option 'query': 'zebra' is not a token"),
        ("qk-vectors", "sentence: nope\n", 2, "option 'sentence': unknown sentence id 'nope'"),
        ("kv-cache", "model: GPT-5\n", 2, "option 'model' must be one of SmolLM2-135M, Llama-2-7B, Llama-3-8B"),
        ("kv-cache", "dtype: fp64\n", 2, "option 'dtype' must be one of float32, float16, int8"),
    ],
)
def test_bad_options_are_reported_at_their_line(kind: str, body: str, line: int, message: str) -> None:
    _, _, problems = widget(kind, body)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"content/test.md:{line}: {message}"), problems[0]
