"""Module 04 in Chromium: the bigram widget (a click or the arrow keys show a character's
next-character distribution, the numbers the build computed; the sampler writes exactly the poem a Python port of
its seeded generator writes from the same table, at two temperatures) and a code cell run in the browser."""

from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.e2e

PAGE = "module-04-bigram-mlp.html"


def widget_data(page) -> dict:
    """The page's JSON and the heatmap's numbers, which the widget loaded from their data script when it mounted."""
    data = json.loads(page.text_content('.widget[data-widget="bigram"] script.widget-data'))
    return {**data, **page.evaluate("key => self.Course.bigram['d' + key]", data["heat"]["key"])}


def open_widget(page):
    page.goto(page.base + PAGE)
    root = page.locator('.widget[data-widget="bigram"]')
    root.scroll_into_view_if_needed()
    page.locator('.widget[data-widget="bigram"][data-ready="true"]').wait_for()
    return root


def shown_next(root) -> list[list[str]]:
    return root.locator(".bigram-next li").evaluate_all(
        "els => els.map(li => [li.querySelector('.bar-label').textContent, li.querySelector('.bar-value').textContent])"
    )


def expected_next(row: dict) -> list[list[str]]:
    def percent(p: float) -> str:  # bigram.js: two decimals below 10 %, else one
        return f"{p * 100:.{2 if p < 0.1 else 1}f}%"

    return [[ch, percent(p)] for _, ch, p, _ in row["next"]]


def test_click_and_keys_show_a_characters_next_distribution(page):
    root = open_widget(page)
    data = widget_data(page)
    chars = data["chars"]
    start = data["char"]
    assert root.locator(".bigram-chars button[aria-pressed='true']").text_content() == chars[start]
    assert shown_next(root) == expected_next(data["rows"][start])

    # a click on a cell of row 4 selects that row's character
    cell = root.locator('td[data-row="4"][data-col="0"]')
    cell.click()
    assert root.locator(".bigram-chars button[aria-pressed='true']").text_content() == chars[4]
    assert shown_next(root) == expected_next(data["rows"][4])
    readout = root.locator(".heat-readout").text_content()
    assert readout.startswith(f"“{chars[4]}”后面接“{chars[0]}”")
    assert f"{data['counts'][4][0]:,} 次" in readout

    # the arrow keys move through the grid and the distribution follows the row
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.row") == "5"
    assert shown_next(root) == expected_next(data["rows"][5])

    # the character buttons work too (keyboard: Tab to one, Enter)
    button = root.locator(".bigram-chars button").nth(1)
    button.focus()
    page.keyboard.press("Enter")
    assert shown_next(root) == expected_next(data["rows"][1])

    # the count view: the same grid as counts, shaded by count over the largest count shown
    root.locator(".widget-controls button", has_text="次数").click()
    assert root.locator('td[data-row="0"][data-col="1"]').text_content() in (
        str(data["counts"][0][1]),
        f"{data['counts'][0][1] / 10000:.1f}万",
    )


def mulberry32(seed: int):
    """attention_course/widgets/bigram/widget.js mulberry32, step for step in 32-bit arithmetic."""
    a = seed & 0xFFFFFFFF

    def imul(x: int, y: int) -> int:
        return (x * y) & 0xFFFFFFFF

    def rand() -> float:
        nonlocal a
        a = (a + 0x6D2B79F5) & 0xFFFFFFFF
        t = imul(a ^ (a >> 15), 1 | a)
        t = ((t + imul(t ^ (t >> 7), 61 | t)) & 0xFFFFFFFF) ^ t
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296

    return rand


def python_poem(table: dict, seed: int, temperature: float) -> str:
    rand, chars, out, prev = mulberry32(seed), list(table["vocab"]), [], 0
    while len(out) < 48:
        ids, counts = table["next"][prev], table["counts"][prev]
        weights = [c ** (1 / temperature) if c > 0 else 0 for c in counts]
        r = rand() * sum(weights)
        pick = ids[-1]
        for k, w in enumerate(weights):
            r -= w
            if r < 0:
                pick = ids[k]
                break
        if pick == 0:
            break
        out.append(chars[pick])
        prev = pick
    return "".join(out)


def test_sampler_writes_the_seeded_poem_at_each_temperature(page, built_site):
    root = open_widget(page)
    data = widget_data(page)
    assert not [u for u in page.watch.requests if "/assets/ngram/" in u], "the sampler's table loads on first use"
    raw = (built_site / data["data"]).read_text(encoding="utf-8")
    table = json.loads(raw[raw.index("=", raw.index(".d")) + 1 :].rstrip().rstrip(";"))

    def generate(seed: int, temperature: float) -> str:
        root.locator(".bigram-seed").fill(str(seed))
        root.locator('input[type="range"]').evaluate(
            "(el, t) => { el.value = String(t); el.dispatchEvent(new Event('input', {bubbles: true})); }", temperature
        )
        assert root.locator("output.temp-value").text_content() == f"T = {temperature:.1f}"
        root.locator(".bigram-generate").click()
        page.wait_for_function(
            "([s, t]) => { const p = document.querySelector('.bigram-poem');"
            " return p.dataset.seed === s && p.dataset.temperature === t; }",
            arg=[str(seed), f"{temperature:.1f}"],
        )
        return root.locator(".bigram-poem").text_content()

    cold = generate(7, 0.5)
    assert [u for u in page.watch.requests if "/assets/ngram/" in u]
    assert cold == python_poem(table, 7, 0.5)
    hot = generate(7, 2.0)
    assert hot == python_poem(table, 7, 2.0)
    assert hot != cold
    assert generate(7, 0.5) == cold  # same seed, same temperature: the same poem
    assert set(cold + hot) <= set(table["vocab"])
    # 换个种子再来: the next seed
    root.locator(".bigram-another").click()
    page.wait_for_function("document.querySelector('.bigram-poem').dataset.seed === '8'")
    assert root.locator(".bigram-poem").text_content() == python_poem(table, 8, 0.5)
    assert (
        root.locator(".bigram-ppl")
        .text_content()
        .startswith(f"验证集困惑度：二元模型 {data['quotes']['bigram_held_ppl']}")
    )


def test_the_count_matrix_cell_runs_in_the_browser(page):
    page.goto(page.base + PAGE)
    cell = "#cell-bigram-counts"
    built = page.text_content(f"{cell} .cell-log")
    assert "词表大小" in built and "“山”后面最可能的字" in built
    page.click(f"{cell} .cell-run")
    page.wait_for_function(
        "sel => /完成|出错/.test(document.querySelector(sel + ' .cell-status').textContent)", arg=cell, timeout=120_000
    )
    assert page.text_content(f"{cell} .cell-status").startswith("完成")
    assert page.text_content(f"{cell} .cell-log") == built  # the browser prints what the build printed
    assert re.search(r"计数矩阵 \(\d+, \d+\)", built)
