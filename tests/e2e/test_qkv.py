"""The three widgets of qkv-explained.html in Chromium: the live maths of qkv-projection
against attention_core at slider positions the test moves to (keyboard and pointer), the real queries and keys of
qk-vectors (keys stay put across the query heads that share them), the KV-cache calculator against hand sums,
and the page at 390 px."""

from __future__ import annotations

import json
import math

import pytest

from attention_core.qkv import PLANE_TOKENS, PLANE_X, projection_state
from tests.e2e.test_widgets import fixed, open_widget, pct_row

pytestmark = pytest.mark.e2e
PAGE = "qkv-explained.html"


def embedded(page, name: str) -> dict:
    return json.loads(page.locator(f'.widget[data-widget="{name}"] script.widget-data').text_content())


def score_cells(root) -> list[list[str]]:
    n = len(PLANE_TOKENS)
    return [
        [root.locator(f'.qkv-scores td[data-row="{i}"][data-col="{j}"]').inner_text() for j in range(n)]
        for i in range(n)
    ]


def expected_cells(state) -> list[list[str]]:
    return [[fixed(float(s)) for s in row] for row in state.scores]


def test_qkv_projection_follows_the_sliders_with_attention_cores_numbers(page):
    root = open_widget(page, PAGE, "qkv-projection")
    data = embedded(page, "qkv-projection")
    start = projection_state(PLANE_X, data["angle_q"], data["scale_q"], data["angle_k"], data["scale_k"])
    # the live view starts where the build's reference (the static fallback) is, and both are attention_core's
    assert (
        score_cells(root) == expected_cells(start) == [[fixed(s) for s in row] for row in data["reference"]["scores"]]
    )
    query = data["query"]
    assert root.locator(".bars .bar-value").all_inner_texts() == pct_row(start.weights[query])

    # keyboard: W_K's angle four steps right (4 × 5° = +20°), W_Q's scale two steps left (−0.10)
    angle_k = root.get_by_label("W_K 旋转")
    angle_k.focus()
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    scale_q = root.get_by_label("W_Q 缩放")
    scale_q.focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    moved = projection_state(PLANE_X, data["angle_q"], data["scale_q"] - 0.1, data["angle_k"] + 20, data["scale_k"])
    assert score_cells(root) == expected_cells(moved)
    assert root.locator(".qkv-value").nth(2).inner_text() == f"{fixed(data['angle_k'] + 20, 0)}°"

    # another query word, then a position set by pointer (fill = what dragging ends with)
    root.get_by_role("button", name="Query：追").click()
    root.get_by_label("W_Q 旋转").fill("135")
    there = projection_state(PLANE_X, 135, data["scale_q"] - 0.1, data["angle_k"] + 20, data["scale_k"])
    assert score_cells(root) == expected_cells(there)
    assert root.locator(".bars .bar-value").all_inner_texts() == pct_row(there.weights[PLANE_TOKENS.index("追")])
    # each q arrow ends where attention_core puts q (SVG y points down; arrows inside the frame are not clipped)
    tip = root.locator(".qkv-q.is-query line")
    q = there.Q[PLANE_TOKENS.index("追")]
    if math.hypot(*q) < 2.2:
        assert float(tip.get_attribute("x2")) == pytest.approx(q[0], abs=1e-6)
        assert float(tip.get_attribute("y2")) == pytest.approx(-q[1], abs=1e-6)

    # one matrix for both: the scores turn symmetric and the readout says so
    root.get_by_role("button", name="让 W_K = W_Q").click()
    cells = score_cells(root)
    assert all(cells[i][j] == cells[j][i] for i in range(3) for j in range(3))
    assert "对称" in root.locator(".qkv-asym").inner_text()
    root.get_by_role("button", name="复位").click()
    assert score_cells(root) == expected_cells(start)
    assert "不对称" in root.locator(".qkv-asym").inner_text()


def test_qk_vectors_keys_stay_when_the_query_head_changes(page):
    root = open_widget(page, PAGE, "qk-vectors")
    data = embedded(page, "qk-vectors")
    words = data["words"]
    head = next(p for p in data["heads"] if p["head"] == data["head"])
    i = data["query"]
    assert words[i] == "it"
    assert root.locator(".qk-bars .bar-value").all_inner_texts() == [f"{p}%" for p in head["percents"][i]]
    assert root.locator(".qk-score").all_inner_texts() == [fixed(s) for s in head["scores"][i]]
    keys = [r.get_attribute("x") for r in root.locator(".qkv-k rect").all()]
    queries = [c.get_attribute("cx") for c in root.locator("circle.qk-q").all()]
    assert len(keys) == len(words) == len(queries)

    other = data["heads"][0]
    root.get_by_role("button", name=f"查询头 {other['head']}").click()
    assert root.locator(".qk-bars .bar-value").all_inner_texts() == [f"{p}%" for p in other["percents"][i]]
    assert [r.get_attribute("x") for r in root.locator(".qkv-k rect").all()] == keys  # shared keys: not moved
    assert [c.get_attribute("cx") for c in root.locator("circle.qk-q").all()] != queries  # its own queries

    # keyboard: the first word as query (it sees only itself: one bar of 100%)
    first = root.get_by_role("button", name=words[0], exact=True)
    first.focus()
    page.keyboard.press("Enter")
    assert first.get_attribute("aria-pressed") == "true"
    assert root.locator(".qk-bars .bar-value").all_inner_texts() == ["100%"]


def test_kv_cache_calculator_against_hand_sums_and_bad_input(page):
    root = open_widget(page, PAGE, "kv-cache")
    per_token = root.locator(".kv-per-token")
    # SmolLM2-135M by hand: 30 × 2 × 3 × 64 × 2 = 23,040 bytes; × 8,192 tokens = 188,743,680 B = 180.0 MiB
    assert per_token.inner_text() == "23,040 字节"
    assert root.locator(".kv-context").inner_text() == "180.0 MiB"
    assert "69,120" in root.locator(".kv-compare").inner_text()  # 9 query heads each with its own K/V
    # Llama-2-7B: 32 × 2 × 32 × 128 × 2 = 524,288 bytes; Llama-3-8B (8 KV heads): 131,072
    root.get_by_role("button", name="Llama-2-7B").click()
    assert per_token.inner_text() == "524,288 字节"
    root.get_by_role("button", name="Llama-3-8B").click()
    assert per_token.inner_text() == "131,072 字节"
    # typed sizes: 16 layers halves it (65,536); int8 halves it again (32,768); the preset is no longer pressed
    root.get_by_label("层数").fill("16")
    assert per_token.inner_text() == "65,536 字节"
    assert root.get_by_role("button", name="Llama-3-8B").get_attribute("aria-pressed") == "false"
    root.get_by_label("每个数").select_option(label="int8 · 1 字节")
    assert per_token.inner_text() == "32,768 字节"
    # bad input: a message, no NaN, and the field is marked invalid
    root.get_by_label("KV 头数").fill("")
    assert "正整数" in root.locator(".kv-formula").inner_text()
    assert root.get_by_label("KV 头数").get_attribute("aria-invalid") == "true"
    assert "NaN" not in root.inner_text()
    root.get_by_label("KV 头数").fill("2.5")
    assert "正整数" in root.locator(".kv-formula").inner_text()
    root.get_by_label("KV 头数").fill("8")
    assert per_token.inner_text() == "32,768 字节"


def test_the_page_fits_a_phone_and_every_widget_starts(mobile_page):
    mobile_page.goto(mobile_page.base + PAGE)
    for name in ("qkv-projection", "qk-vectors", "kv-cache"):
        mobile_page.locator(f'.widget[data-widget="{name}"]').first.scroll_into_view_if_needed()  # lazy scripts
        mobile_page.locator(f'.widget[data-widget="{name}"][data-ready="true"]').wait_for()
    assert mobile_page.evaluate("document.documentElement.scrollWidth") <= 390
    for widget in mobile_page.locator(".widget[data-widget]").all():
        widget.scroll_into_view_if_needed()
        box = widget.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
