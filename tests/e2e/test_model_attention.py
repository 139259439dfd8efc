"""The real model's attention in Chromium: the side-by-side shows the same *it* row in both
sentences, every control of the explorer changes the grid to the numbers the build computed (checked against
attention_course.smollm2 here), the full data loads only on first interaction, and the gallery shows its four heads."""

from __future__ import annotations

import pytest

from attention_core.models.sentences import get_sentence
from attention_course import smollm2 as real_model
from builder.model import BuildOptions
from tests.conftest import ROOT, TEST_CACHE

pytestmark = pytest.mark.e2e

MODULE = "module-05-attention.html"
OPTIONS = BuildOptions(root=ROOT, cache_dir=TEST_CACHE, python_runtime=False)


def run(sentence_id: str) -> real_model.SentenceRun:
    return real_model.sentence_run(OPTIONS, get_sentence(sentence_id).text)  # cached by the site build


def widgets(page):
    """The three model-attention widgets of module 05, mounted. Their script loads only when one nears the
    viewport (theme/js/site/lazy-widgets.js): not with the page."""
    page.goto(page.base + MODULE)
    page.wait_for_load_state("load")
    assert not [u for u in page.watch.requests if "widget-model-attention.js" in u]
    roots = page.locator('.widget[data-widget="model-attention"]')
    assert roots.count() == 3  # compare, explorer, gallery
    roots.first.scroll_into_view_if_needed()
    page.locator('.widget[data-widget="model-attention"][data-ready="true"]').first.wait_for()
    assert page.locator('.widget[data-widget="model-attention"][data-ready="true"]').count() == 3
    return [roots.nth(i).locator(".widget-body") for i in range(3)]


def grid_values(table) -> list[list[str]]:
    return table.evaluate("t => [...t.tBodies[0].rows].map(r => [...r.cells].slice(1).map(c => c.textContent))")


def test_side_by_side_shows_identical_it_rows_and_the_rows_that_differ(page):
    compare, _, _ = widgets(page)
    tired, wide = run("animal-tired"), run("animal-wide")
    it = tired.tokens.index(" it")
    tables = compare.locator("table.ma-grid")
    a, b = grid_values(tables.nth(0)), grid_values(tables.nth(1))
    assert a[it][: it + 1] == b[it][: it + 1]  # the model has not seen tired / wide yet
    assert a[it][: it + 1] == [str(x) for x in tired.matrix(4, 2)[it][: it + 1]]
    assert set(a[it][it + 1 :]) == {"—"}  # the future is masked
    marked = [tables.nth(k).locator("tbody tr").nth(it).locator(".ma-same").count() for k in (0, 1)]
    assert marked == [1, 1]
    t_row = tired.tokens.index(" tired")
    assert tables.nth(0).locator("tbody tr").nth(t_row).get_attribute("class").split().count("is-query") == 1
    animal, street = tired.tokens.index(" animal"), tired.tokens.index(" street")
    summary = compare.locator(".ma-summary").inner_text()
    m_t, m_w = tired.matrix(4, 2), wide.matrix(4, 2)
    w_row = wide.tokens.index(" wide")
    assert f"tired → animal {m_t[t_row][animal]}%、street {m_t[t_row][street]}%" in summary
    assert f"wide → animal {m_w[w_row][animal]}%、street {m_w[w_row][street]}%" in summary
    # another layer: the full data loads, the grids follow, the it rows stay equal
    own_data = compare.locator("xpath=../script[@class='widget-data']").evaluate("s => JSON.parse(s.textContent).data")
    assert not [u for u in page.watch.requests if own_data in u]  # not before the reader asks for another head
    compare.locator(".ma-layer").fill("20")
    page.wait_for_function(
        "el => el.textContent.startsWith('第 20 层')", arg=compare.locator(".ma-summary").element_handle()
    )
    a, b = grid_values(tables.nth(0)), grid_values(tables.nth(1))
    assert a[it][: it + 1] == b[it][: it + 1] == [str(x) for x in tired.matrix(20, 2)[it][: it + 1]]
    assert [u for u in page.watch.requests if own_data in u]


def test_explorer_sentence_layer_head_average_row_bars_and_keyboard(page):
    _, explorer, _ = widgets(page)
    table = lambda: explorer.locator("table.ma-grid")  # noqa: E731
    tired = run("animal-tired")
    shown = lambda m: [[str(x) if j <= i else "—" for j, x in enumerate(row)] for i, row in enumerate(m)]  # noqa: E731
    assert grid_values(table()) == shown(tired.matrix(4, 2))
    explorer.get_by_role("button", name="头 7").click()
    page.wait_for_function(
        "el => el.textContent.includes('头 7')", arg=explorer.locator(".ma-caption").element_handle()
    )
    assert grid_values(table()) == shown(tired.matrix(4, 7))
    explorer.get_by_role("button", name="平均").click()
    page.wait_for_function(
        "el => el.textContent.includes('各头平均')", arg=explorer.locator(".ma-caption").element_handle()
    )
    assert grid_values(table()) == shown(tired.mean_matrix(4))
    # another sentence, then a query token's row as bars that sum to 100
    explorer.get_by_role("button", name="首都").click()
    capitals = run("capitals")
    assert grid_values(table()) == shown(capitals.mean_matrix(4))
    row = len(capitals.tokens) - 2
    explorer.locator(".ma-row").nth(row).click()
    values = explorer.locator(".ma-bars .bar-value").all_inner_texts()
    assert sum(int(v.rstrip("%")) for v in values) == 100 and len(values) == row + 1
    # hover and keyboard: the readout names the token pair and the value
    table().locator('td[data-row="2"][data-col="1"]').hover()
    readout = explorer.locator(".heat-readout")
    expected = f"{capitals.tokens[2].strip()} → {capitals.tokens[1].strip()}：{capitals.mean_matrix(4)[2][1]}%"
    assert expected in " ".join(readout.inner_text().split())
    table().locator('td[data-row="2"][data-col="1"]').click()
    page.keyboard.press("ArrowDown")
    assert page.evaluate("[document.activeElement.dataset.row, document.activeElement.dataset.col]") == ["3", "1"]
    assert explorer.locator('td[tabindex="0"]').count() == 1


def test_gallery_shows_the_best_head_of_each_pattern(page):
    _, _, gallery = widgets(page)
    cards = gallery.locator(".ma-card")
    cards.nth(3).wait_for()  # drawn once the full data has loaded
    assert cards.count() == 4
    # the cards' text (innerText is empty while the gallery's section is not rendered: content-visibility: auto)
    for entry, card in zip(real_model.head_gallery(OPTIONS), [cards.nth(i) for i in range(4)]):
        assert f"第 {entry.layer} 层 · 头 {entry.head}" in card.text_content()
        assert f"得分 {entry.score:.2f}" in card.text_content()
