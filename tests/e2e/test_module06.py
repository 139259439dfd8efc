"""Module 06 in a real Chromium: the positional-encoding, param-count and next-token
widgets (numbers checked against attention_core and the cached real-model runs), the tiny decoder cell run in the
browser's Python, and the index's learning path with progress."""

from __future__ import annotations

import re

import pytest

from attention_core.param_count import DecoderConfig, count_parameters
from attention_core.positional import offset_similarity
from attention_course import smollm2 as real_model
from attention_course.widgets.next_token.widget import DEFAULT_PROMPTS, TEMPERATURES, percent1, shown_token
from builder.model import BuildOptions
from tests.conftest import ROOT

pytestmark = pytest.mark.e2e
PAGE = "module-06-transformer.html"


def widget(page, kind: str, n: int = 0):
    root = page.locator(f'.widget[data-widget="{kind}"]').nth(n)
    root.scroll_into_view_if_needed()
    page.wait_for_function(
        "([k, n]) => document.querySelectorAll(`.widget[data-widget='${k}']`)[n].dataset.ready === 'true'",
        arg=[kind, n],
    )
    return root.locator(".widget-body")  # not the copy kept for print (theme/js/site/reading.js)


def test_positional_encoding_dims_and_position(page):
    page.goto(page.base + PAGE)
    root = widget(page, "positional-encoding")
    caption = root.locator(".pe-sim")
    sims = offset_similarity(48, 64)
    assert f"相距 1 为 {sims[1]:.2f}" in caption.inner_text() and f"相距 10 为 {sims[10]:.2f}" in caption.inner_text()
    root.get_by_role("button", name="16 维").click()
    assert f"相距 1 为 {offset_similarity(48, 16)[1]:.2f}" in caption.inner_text()
    assert root.get_by_role("button", name="16 维").get_attribute("aria-pressed") == "true"
    slider = root.get_by_role("slider")
    slider.focus()
    page.keyboard.press("ArrowRight")
    assert root.locator(".pe-pos output").inner_text() == "11"
    assert "p = 11" in caption.inner_text()
    # the similarity curve peaks (= 1) at the chosen position: its dot is drawn at y of 1
    assert root.locator(".pe-chart circle").count() == 1
    assert root.locator("canvas[role=img]").get_attribute("aria-label").startswith("48 个位置 × 16 维")


def test_param_count_presets_and_edited_numbers(page):
    page.goto(page.base + PAGE)
    root = widget(page, "param-count")
    total = root.locator(".pc-total strong")
    assert total.inner_text() == "134,515,008"
    root.get_by_role("button", name="GPT-3 175B").click()
    assert total.inner_text() == f"{174_604_259_328:,}"
    root.get_by_role("button", name="GPT-2 small").click()
    assert total.inner_text() == "124,439,808"
    # edit: GPT-2 small with 24 layers, untied head → the Python count of that configuration
    layers = root.get_by_label("层数 N")
    layers.fill("24")
    root.get_by_label("输出层").select_option(label="独立矩阵")
    expected = count_parameters(DecoderConfig("e", 50257, 24, 768, 12, 12, 3072, 1024, tied_embeddings=False))
    assert total.inner_text() == f"{expected['total']:,}"
    assert root.get_by_role("button", name="自定义").get_attribute("aria-pressed") == "true"
    # a number that cannot be counted says why and keeps the page working
    root.get_by_label("注意力头").fill("7")
    assert "必须能被注意力头数（7）整除" in root.locator(".pc-total").inner_text()


@pytest.fixture(scope="module")
def runs():
    return {t: real_model.next_token_run(BuildOptions(root=ROOT), t, TEMPERATURES) for t in DEFAULT_PROMPTS}


def test_next_token_top10_and_temperature(page, runs):
    page.goto(page.base + PAGE)
    root = widget(page, "next-token", 0)
    run = runs[DEFAULT_PROMPTS[0]]
    rows = root.locator(".nt-table tbody tr")
    assert rows.count() == 11
    k = TEMPERATURES.index(1.0)
    assert rows.nth(0).locator("th").inner_text() == shown_token(run.top_tokens[0])
    assert rows.nth(0).locator(".nt-value").inner_text() == percent1(run.probs[k][0])
    slider = root.get_by_role("slider", name="温度 T")
    slider.focus()
    page.keyboard.press("Home")
    assert root.locator(".temp-value").inner_text() == "T = 0.1"
    assert rows.nth(0).locator(".nt-value").inner_text() == percent1(run.probs[0][0])
    page.keyboard.press("End")
    assert rows.nth(10).locator(".nt-value").inner_text() == percent1(run.rest[-1])
    assert run.probs[-1][0] < run.probs[k][0] < run.probs[0][0]  # cooler = more concentrated (what the prose says)
    root.get_by_role("button", name=DEFAULT_PROMPTS[1]).click()
    assert rows.nth(0).locator("th").inner_text() == shown_token(runs[DEFAULT_PROMPTS[1]].top_tokens[0])


def test_logit_lens_rows_and_prompt_switch(page, runs):
    page.goto(page.base + PAGE)
    root = widget(page, "next-token", 1)
    run = runs[DEFAULT_PROMPTS[0]]
    rows = root.locator(".nt-lens tbody tr")
    assert rows.count() == run.n_layers + 1
    assert [int(x) for x in rows.locator("td:nth-child(4)").all_inner_texts()] == run.answer_rank
    assert rows.last.get_attribute("class") == "is-answer"
    assert "直到输出处才排到第一" in root.locator(".widget-caption").first.inner_text()
    root.get_by_role("button", name=DEFAULT_PROMPTS[1]).click()
    other = runs[DEFAULT_PROMPTS[1]]
    assert [int(x) for x in rows.locator("td:nth-child(4)").all_inner_texts()] == other.answer_rank


def test_tiny_decoder_cell_runs_in_the_browser_like_the_build(page):
    page.goto(page.base + PAGE)
    cell = page.locator("#cell-tiny-decoder")
    cell.scroll_into_view_if_needed()
    build_log = cell.locator(".cell-log").text_content()  # (its section may not be laid out yet)
    assert "logits: (4, 20)" in build_log
    cell.get_by_role("button", name="运行").click()
    page.wait_for_function(
        "document.querySelector('#cell-tiny-decoder .cell-output').dataset.origin === 'browser' && "
        "/完成|出错|中断/.test(document.querySelector('#cell-tiny-decoder .cell-status').textContent)",
        timeout=180_000,
    )
    assert cell.locator(".cell-log").inner_text() == build_log


def test_index_lists_the_modules_as_a_path_with_progress(page):
    page.goto(page.base + "index.html")
    cards = page.locator(".course-path > .card")
    slugs = cards.evaluate_all("els => els.map(e => e.dataset.slug)")
    written = sorted(p.stem for p in (ROOT / "content").glob("module-*.md"))
    assert [s for s in slugs if s in written] == written  # every module page there is, in course order
    assert "module-06-transformer" in slugs and slugs.index("module-05-attention") < slugs.index(
        "module-06-transformer"
    )
    page.goto(page.base + PAGE)
    page.goto(page.base + "index.html")
    card = page.locator('.course-path > .card[data-slug="module-06-transformer"]')
    assert card.get_attribute("data-progress") == "started"
    marker = card.evaluate("e => getComputedStyle(e, '::before').content")
    assert re.fullmatch(r'"?counter\(path-step\)"?|"\d+"|counter\(path-step\)', marker) or marker  # drawn
