"""The real-model data of transformer-explained: the `transformer-flow` stages have the shapes the forward pass
really produces (the pieces of attention_core/models/llama.py run on the real weights), the model's sizes are the
ones SmolLM2-135M is published with, the `generation-tree` distributions are what a direct forward pass gives for
every path, the claims the page's prose makes about them hold, and bad options are reported at their line."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from attention_core.core import causal_mask
from attention_core.models.llama import forward, grouped_query_attention, rms_norm, rope_cos_sin, silu
from attention_course import smollm2 as real_model
from attention_course.widgets.generation_tree import widget as generation_tree
from attention_course.widgets.transformer_flow import widget as transformer_flow
from builder.model import BuildOptions
from tests.conftest import ROOT, TEST_CACHE
from tests.plugin_harness import render_page

OPTIONS = BuildOptions(root=ROOT, cache_dir=TEST_CACHE, python_runtime=False)
DATA_RE = re.compile(r'<script type="application/json" class="widget-data">(.*?)</script>', re.S)


def widget(kind: str, body: str = "") -> tuple[dict, dict[str, bytes], str]:
    html, problems, facts = render_page(f"```{{widget}} {kind}\n{body}```\n", cache_dir=TEST_CACHE)
    assert problems == []
    return json.loads(DATA_RE.search(html).group(1)), facts.files, html


def test_the_sizes_are_smollm2_135m_as_published() -> None:
    # HuggingFaceTB/SmolLM2-135M config.json: num_hidden_layers 30, hidden_size 576, num_attention_heads 9,
    # num_key_value_heads 3, intermediate_size 1536, vocab_size 49152 (head_dim = 576 / 9 = 64)
    s = real_model.model_shape(OPTIONS)
    assert (s.n_layers, s.d_model, s.n_heads, s.n_kv_heads, s.head_dim, s.d_ffn, s.vocab_size) == (
        30,
        576,
        9,
        3,
        64,
        1536,
        49152,
    )


def test_every_stage_has_the_shape_of_the_array_the_model_computes(smollm2) -> None:
    data, files, html = widget("transformer-flow", "sentence: The capital of France is\n")
    assert files == {}
    stages = {st["id"]: [sh["dims"] for sh in st["shapes"]] for st in data["stages"]}
    assert list(stages) == list(transformer_flow.STAGE_IDS)
    w, cfg = smollm2.weights, smollm2.config
    ids = smollm2.encode("The capital of France is")
    assert data["ids"] == ids and data["tokens"][-1] == " is"
    layer = w.layers[0]
    x = w.token_embedding[ids]
    n1 = rms_norm(x, layer.attn_norm, cfg.rms_eps)
    q, k, v = n1 @ layer.w_q.T, n1 @ layer.w_k.T, n1 @ layer.w_v.T
    cos, sin = rope_cos_sin(len(ids), cfg.rope_dim, cfg.rope_theta)
    attn_out, weights = grouped_query_attention(n1, layer, cfg, cos, sin, causal_mask(len(ids)))
    heads = weights @ np.repeat(v.reshape(len(ids), cfg.n_kv_heads, -1).transpose(1, 0, 2), cfg.group_size, axis=0)
    x1 = x + attn_out
    n2 = rms_norm(x1, layer.ffn_norm, cfg.rms_eps)
    hidden = silu(n2 @ layer.w_gate.T) * (n2 @ layer.w_up.T)
    down = hidden @ layer.w_down.T
    result = forward(w, ids, return_residuals=True)
    assert np.allclose(x1 + down, result.residuals[1], atol=1e-5)  # the pieces above are block 0 of the forward pass
    real = {
        "tokens": [np.asarray(ids)],
        "embed": [w.token_embedding, x],
        "norm1": [n1],
        "qkv": [q, k, v],
        "scores": [weights],
        "mix": [heads, attn_out],
        "add1": [x1],
        "norm2": [n2],
        "ffn_up": [hidden],
        "ffn_down": [down],
        "add2": [x1 + down],
        "stack": [result.residuals[-1]],
        "head": [result.logits],
        "probs": [result.next_token_probs()],
    }
    assert {k: [list(a.shape) for a in arrays] for k, arrays in real.items()} == stages
    # the last stage names the real top predictions, as whole percents of the real probabilities
    probs = result.next_token_probs()
    best = int(np.argmax(probs))
    assert "explain" not in data["stages"][-1]  # the sentences are in the static table only; the live view reads them
    assert f"「␣Paris」{math.floor(probs[best] * 100 + 0.5)}%" in html.rsplit("tf-explain-cell", 1)[1]
    assert smollm2.tokenizer.token_strings([best]) == [" Paris"]
    # the static table shows every stage with its shape
    assert html.count('<tr><th scope="row">') == len(stages) and "5 × 49152" in html


def test_temperature_probs_by_hand() -> None:
    # logits [2, 1, 0]: T = 1 → e²/(e² + e + 1) = 7.389/11.107 = 0.6652; T = 0.5 → [4, 2, 0]: e⁴/(e⁴ + e² + 1)
    # = 54.60/62.99 = 0.8668; T = 2 → [1, .5, 0]: e/(e + e^.5 + 1) = 2.718/5.367 = 0.5065
    (t05,), (t1,), (t2,) = real_model.temperature_probs(np.array([2.0, 1.0, 0.0]), (0.5, 1.0, 2.0), np.array([0]))
    assert (round(t05, 4), round(t1, 4), round(t2, 4)) == (0.8668, 0.6652, 0.5065)


def test_the_tree_is_what_a_direct_forward_pass_gives_on_every_path(smollm2) -> None:
    tree = real_model.continuation_tree(
        OPTIONS,
        "The capital of France is",
        top=generation_tree.TOP,
        branching=generation_tree.BRANCHING,
        depth=7,
        temperatures=generation_tree.TEMPERATURES,
    )
    # 1 root, 5 children, 5·3, 5·3·2, then 30 greedy nodes at each of depths 4 … 7
    assert len(tree.nodes) == 1 + 5 + 15 + 30 * 5 == tree.forward_passes
    t1 = tree.temperatures.index(1.0)
    for index, node in enumerate(tree.nodes):
        for row in node.probs:
            assert all(a >= b for a, b in zip(row, row[1:])) and 0 < sum(row) <= 1  # ranked; the rest is the tail
        for k, child in enumerate(node.children):
            if child >= 0:
                assert child > index and tree.nodes[child].path == node.path + (node.top_ids[k],)
                assert tree.node_at(tree.nodes[child].path) is tree.nodes[child]
    deepest = tree.nodes[-1]
    for node in (tree.nodes[0], tree.nodes[3], tree.nodes[17], deepest):
        probs = forward(smollm2.weights, list(tree.prompt_ids) + list(node.path)).next_token_probs()
        top = np.argsort(-probs, kind="stable")[: tree.top]
        assert list(node.top_ids) == [int(i) for i in top]
        assert np.allclose(node.probs[t1], probs[top], atol=1e-6)
    assert len(deepest.path) == 7 and set(deepest.children) == {-1}
    assert tree.node_at((tree.nodes[0].top_ids[7],)) is None  # the 8th candidate has no branch


def test_the_page_embeds_first_steps_and_loads_the_tree_and_the_prose_holds() -> None:
    data, files, html = widget("generation-tree", "prompts: [capital, story]\n")
    ((path, script),) = files.items()
    assert path == data["data"] and path.startswith("assets/model/generation-")
    full = json.loads(script.decode().split(f"d{data['key']}=", 1)[1].rstrip(";\n"))
    for p in data["prompts"]:
        nodes = full[p["id"]]["nodes"]
        assert nodes[0] == p["root"] and len(nodes) == p["nodes"]
        assert set(p) == {
            "id",
            "title",
            "text",
            "tokens",
            "root",
            "strings",
            "greedy",
            "greedy_tokens",
            "nodes",
            "passes",
        }  # of the tree, only the first step is in the page
        assert set(p["strings"]) == {str(i) for i in p["root"]["t"]}
    capital, story = data["prompts"]
    words = lambda p: [p["strings"][str(i)] for i in p["root"]["t"]]  # noqa: E731
    t1, hot = data["temperatures"].index(1.0), len(data["temperatures"]) - 1
    # “温度为 1 时 Paris … 调到最高一档，其余几万个 token 组成的长尾分走了大部分概率”
    assert words(capital)[0] == " Paris" and capital["root"]["p"][t1][0] > 0.5
    assert sum(capital["root"]["p"][hot]) < 0.5
    # “girl 领先，town 紧随其后”
    assert words(story)[:2] == [" girl", " town"]
    assert capital["greedy"].startswith(" Paris") and capital["greedy_tokens"] == data["depth"] + 1


@pytest.mark.parametrize(
    "kind, body, message",
    [
        (
            "transformer-flow",
            "sentence: ''\nstage: nowhere\n",
            "content/test.md:2: option 'sentence' must be a non-empty English sentence, got '' [widget]",
        ),
        (
            "transformer-flow",
            "stage: nowhere\n",
            "content/test.md:2: option 'stage' must be one of "
            + ", ".join(transformer_flow.STAGE_IDS)
            + "; got 'nowhere' [widget]",
        ),
        (
            "generation-tree",
            "prompts: [capital, nope]\n",
            "content/test.md:2: option 'prompts': unknown prompt 'nope' (known ids: capital, story; "
            "or give {text: …, title: …}) [widget]",
        ),
        (
            "generation-tree",
            "temperature: 0.7\n",
            "content/test.md:2: option 'temperature' must be one of the widget's temperatures 0.5, 1, 2; "
            "got 0.7 [widget]",
        ),
        (
            "generation-tree",
            "depth: 40\n",
            "content/test.md:2: option 'depth' must be between 1 and 10, got 40 [widget]",
        ),
        (
            "generation-tree",
            "prompts:\n  - capital\n  - {text: ''}\n",
            "content/test.md:4: option 'prompts': unknown prompt {'text': ''} (known ids: capital, story; "
            "or give {text: …, title: …}) [widget]",
        ),
    ],
)
def test_bad_options_are_reported_at_their_line(kind: str, body: str, message: str) -> None:
    html, problems, _ = render_page(f"```{{widget}} {kind}\n{body}```\n", cache_dir=TEST_CACHE)
    assert message in problems and "widget-data" not in html


def test_a_prompt_too_long_for_the_tree_is_reported_at_its_line() -> None:
    text = "word " * 45
    html, problems, _ = render_page(
        f"```{{widget}} generation-tree\nprompts:\n  - {{text: '{text}'}}\n```\n", cache_dir=TEST_CACHE
    )
    # 46 tokens: "word" and 44 × " word" and the trailing " " (the tokenizer's own count)
    assert problems == [
        "content/test.md:3: prompt custom-1: the prompt has 46 tokens; with 7 more it passes 48 [widget]"
    ]
