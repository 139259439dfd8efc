"""attention_core.qkv and the qkv-projection widget against hand computations, and bad widget options reported
at their line (content/qkv-explained.md)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from attention_core import attention_trace
from attention_core.qkv import (
    PLANE_TOKENS,
    PLANE_X,
    PUBLISHED_CONFIGS,
    kv_cache_bytes_per_token,
    pca_plane,
    plane_projection,
    projection_state,
    shapes_by_name,
)
from tests.plugin_harness import render_snippet

DATA_RE = re.compile(r'<script type="application/json" class="widget-data">(.*?)</script>', re.S)


def test_plane_projection_turns_and_stretches_a_row_vector() -> None:
    # (1, 0) turned 90° anticlockwise is (0, 1); stretched 2× it is (0, 2). (0, 1) turned 90° is (−1, 0).
    w = plane_projection(90, 2)
    assert np.allclose(np.array([1.0, 0.0]) @ w, [0, 2])
    assert np.allclose(np.array([0.0, 1.0]) @ w, [-2, 0])
    assert np.allclose(plane_projection(0, 1), np.eye(2))


def hand_score(a, b, angle_q, scale_q, angle_k, scale_k) -> float:
    """q_a · k_b / √2 by hand: (a R(θq) s_q)·(b R(θk) s_k) = s_q s_k (cos Δ (a·b) + sin Δ (a₁b₂ − a₂b₁)),
    Δ = θq − θk."""
    delta = math.radians(angle_q - angle_k)
    dot = a[0] * b[0] + a[1] * b[1]
    cross = a[0] * b[1] - a[1] * b[0]
    return scale_q * scale_k * (math.cos(delta) * dot + math.sin(delta) * cross) / math.sqrt(2)


def test_the_pages_asymmetric_pair_by_hand() -> None:
    """The page's numbers: 猫 (1, 0.4), 老鼠 (0.8, −0.7), W_Q 20° × 1.5, W_K −40° × 1 (Δ = 60°).
    猫·老鼠 = 0.8 − 0.28 = 0.52; cross = 1·(−0.7) − 0.4·0.8 = −1.02;
    猫→老鼠 = 1.5 (0.5·0.52 + 0.8660·(−1.02)) / √2 = 1.5 · (−0.62335) / 1.41421 = −0.66115;
    老鼠→猫 = 1.5 (0.26 + 0.88335) / √2 = 1.21271: the two directions differ."""
    state = projection_state(PLANE_X, 20, 1.5, -40, 1)
    cat, mouse = PLANE_TOKENS.index("猫"), PLANE_TOKENS.index("老鼠")
    forward, backward = state.pair(cat, mouse)
    assert forward == pytest.approx(-0.66115, abs=1e-4)
    assert backward == pytest.approx(1.21271, abs=1e-4)
    for i, a in enumerate(PLANE_X):
        for j, b in enumerate(PLANE_X):
            assert state.scores[i, j] == pytest.approx(hand_score(a, b, 20, 1.5, -40, 1))
    # the weights are the course's softmax of each row (attention_core.core, not a copy of it)
    ref = attention_trace(np.array(PLANE_X), W_Q=state.W_Q, W_K=state.W_K, W_V=np.eye(2))
    assert np.allclose(state.weights, ref.weights)
    assert np.allclose(state.weights.sum(axis=1), 1)


def test_one_matrix_for_q_and_k_makes_the_scores_symmetric_and_90_degrees_antisymmetric() -> None:
    same = projection_state(PLANE_X, 35, 1.2, 35, 1.2)
    assert np.allclose(same.scores, same.scores.T)
    # Δ = 90°: cos Δ = 0, so score = s_q s_k (a₁b₂ − a₂b₁)/√2 — zero on the diagonal, antisymmetric off it
    turned = projection_state(PLANE_X, 60, 1, -30, 1)
    assert np.allclose(np.diag(turned.scores), 0)
    assert np.allclose(turned.scores, -turned.scores.T)


def test_pca_plane_keeps_a_planar_cloud_whole_and_two_thirds_of_three_axes() -> None:
    flat = np.array([[3.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    plane = pca_plane(flat)
    assert plane.kept == pytest.approx(1.0)
    assert np.allclose(plane.coords @ plane.coords.T, flat @ flat.T)  # through the origin: dot products survive
    # the three unit axes: every direction keeps 1 of 3 units of squared length, a plane keeps 2 of 3
    assert pca_plane(np.eye(3)).kept == pytest.approx(2 / 3)
    again = pca_plane(flat)
    assert np.array_equal(again.coords, plane.coords)  # the sign rule makes the picture reproducible


def test_kv_cache_bytes_per_token_by_hand() -> None:
    # SmolLM2-135M: 30 layers × 2 × 3 KV heads × 64 × 2 bytes = 23,040 bytes (tests/course/test_qkv_model.py
    # checks these sizes against the GGUF file)
    assert kv_cache_bytes_per_token(30, 3, 64, 2) == 23_040
    shapes = shapes_by_name(PUBLISHED_CONFIGS)
    # Llama-2-7B (config.json: 32 layers, 32 heads, no GQA, 4096 / 32 = 128): 32 × 2 × 32 × 128 × 2 = 524,288 = 512 KiB
    assert shapes["Llama-2-7B"].bytes_per_token(2) == 524_288
    # Llama-3-8B (32 layers, 8 KV heads, 128): 32 × 2 × 8 × 128 × 2 = 131,072 = 128 KiB — the page's third quiz
    assert shapes["Llama-3-8B"].bytes_per_token(2) == 131_072
    assert (shapes["Llama-3-8B"].n_layers, shapes["Llama-3-8B"].n_kv_heads, shapes["Llama-3-8B"].head_dim) == (
        32,
        8,
        128,
    )
    with pytest.raises(ValueError, match="n_kv_heads"):
        kv_cache_bytes_per_token(30, 0, 64, 2)


def projection_widget(body: str) -> tuple[dict, str, list[str]]:
    html, problems = render_snippet(f"```{{widget}} qkv-projection\n{body}```\n")
    data = json.loads(DATA_RE.search(html).group(1)) if not problems else {}
    return data, html, problems


def test_the_widget_data_is_attention_core_and_its_fallback_shows_it() -> None:
    data, html, problems = projection_widget("angle_q: 20\nscale_q: 1.5\nangle_k: -40\nscale_k: 1\nquery: 老鼠\n")
    assert problems == []
    state = projection_state(PLANE_X, 20, 1.5, -40, 1)
    assert np.allclose(data["reference"]["scores"], state.scores, atol=1e-6)
    assert np.allclose(data["reference"]["weights"], state.weights, atol=1e-6)
    assert data["query"] == PLANE_TOKENS.index("老鼠")
    assert "−0.66" in html and "1.21" in html  # the static fallback's score table


def test_quoting_a_score_gives_the_widgets_number() -> None:
    body = "angle_q: 20\nscale_q: 1.5\nangle_k: -40\nscale_k: 1\n"
    html, problems = render_snippet(
        f"“猫”找“老鼠”得 {{data}}`qkv-projection 分数 猫→老鼠` 分。\n\n```{{widget}} qkv-projection\n{body}```\n"
    )
    assert problems == []
    assert '<span class="widget-quote">−0.66</span>' in html
    _, problems = render_snippet("{data}`qkv-projection 分数 猫→狗`\n\n```{widget} qkv-projection\n```\n")
    assert len(problems) == 1 and problems[0].startswith("content/test.md:1: ")
    assert "no number called '分数 猫→狗'" in problems[0]


@pytest.mark.parametrize(
    "body, line, message",
    [
        ("angle_q: 20\nangle_k: 7\n", 3, "option 'angle_k' (7) must be a multiple of 5 degrees"),
        ("scale_q: 1.53\n", 2, "option 'scale_q' (1.53) must lie on the slider's grid"),
        ("scale_k: 3\n", 2, "option 'scale_k' must be between 0.25 and 2, got 3"),
        ("query: 狗\n", 2, "option 'query': '狗' is not a word of the widget (猫 追 老鼠)"),
        ("colour: red\n", 2, "unknown option 'colour' for widget 'qkv-projection'"),
    ],
)
def test_bad_options_are_reported_at_their_line(body: str, line: int, message: str) -> None:
    _, _, problems = projection_widget(body)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"content/test.md:{line}: {message}"), problems[0]
