"""The five widgets in Chromium: mouse, touch and keyboard-only use, numbers checked
against values this test computes itself with attention_core, 390 px layout, contrast in both schemes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core import causal_mask, get_example, multi_head_attention, scaled_dot_product_attention, softmax
from builder.widgets.fallback import percent_row_even
from tests.e2e.conftest import mount_all_widgets, read_through, wait_widgets_ready

pytestmark = pytest.mark.e2e

MODULE = "module-05-attention.html"
EXPLAINER = "attention-explained.html"


def pct(w: float) -> str:
    return f"{math.floor(w * 100 + 0.5)}%"


def pct_row(ws) -> list[str]:
    """A row's shown percents: largest remainder, so they add up to 100 (ties to the leftmost)."""
    ws = [float(w) for w in ws]
    shown = [math.floor(w * 100) for w in ws]
    by_remainder = sorted(range(len(ws)), key=lambda j: (shown[j] - ws[j] * 100, j))
    for j in by_remainder[: round(sum(ws) * 100) - sum(shown)]:
        shown[j] += 1
    return [f"{x}%" for x in shown]


def fixed(x: float, decimals: int = 2) -> str:
    text = f"{x:.{decimals}f}"
    return text[1:] if float(text) == 0 and text.startswith("-") else text.replace("-", "−")


def single_head(example_id: str, causal: bool | None = None):
    ex = get_example(example_id)
    use_mask = ex.causal if causal is None else causal
    return ex, *scaled_dot_product_attention(
        ex.X @ ex.W_Q, ex.X @ ex.W_K, ex.X @ ex.W_V, mask=causal_mask(ex.length) if use_mask else None
    )


def open_widget(page, url: str, name: str):
    page.goto(page.base + url)
    # every widget kind's script loads when one of its widgets nears the viewport (theme/js/site/lazy-widgets.js);
    # the author's widget, not a code cell's output drawn by the same script (show_attention → .cell-widget)
    page.locator(f'.widget[data-widget="{name}"]:not(.cell-widget)').first.scroll_into_view_if_needed()
    root = page.locator(f'.widget[data-widget="{name}"][data-ready="true"]:not(.cell-widget)')
    root.wait_for()
    root.scroll_into_view_if_needed()
    return root.locator(".widget-body")  # the live view (the page also keeps a hidden copy for print)


def bar_values(root) -> list[str]:
    return root.locator(".bars .bar-value").all_inner_texts()


def test_heatmap_hover_mask_toggle_and_keyboard(page):
    root = open_widget(page, MODULE, "heatmap")
    readout = root.locator(".heat-readout")
    toggle = root.get_by_role("button", name="因果遮罩")
    assert toggle.get_attribute("aria-pressed") == "true"  # the page asks for `mask: causal`
    cat = get_example("cat-fast")
    assert root.locator("td.is-masked").count() == cat.length * (cat.length - 1) // 2
    assert root.locator("td.heat-sum").all_inner_texts() == ["100%"] * cat.length

    # Hover (row 快, col 猫): the readout shows the causal weight. (Module 05 shows only this designed sentence: the
    # designed it/animal pair under a causal mask told a false story, which the real model's section now tells right.)
    ex, _, weights = single_head("cat-fast", causal=True)
    i, j = ex.index("快"), ex.index("猫")
    root.locator(f'td[data-row="{i}"][data-col="{j}"]').hover()
    assert f"快 → 猫：{pct_row(weights[i])[j]}" in readout.inner_text()
    assert f"第 {i + 1} 行第 {j + 1} 列" in readout.inner_text()

    # Mask off: the upper triangle shows the weights recomputed without the mask.
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "false"
    assert root.locator("td.is-masked").count() == 0
    _, _, full = single_head("cat-fast", causal=False)
    r, k = ex.index("跑"), ex.index("真")
    assert root.locator(f'td[data-row="{r}"][data-col="{k}"]').inner_text() == pct_row(full[r])[k][:-1]
    root.locator(f'td[data-row="{i}"][data-col="{j}"]').hover()
    assert f"快 → 猫：{pct_row(full[i])[j]}" in readout.inner_text()

    # Keyboard only: Space on the toggle, Tab into the grid, arrows to (快, 猫).
    toggle.focus()
    page.keyboard.press("Space")
    assert toggle.get_attribute("aria-pressed") == "true"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.getAttribute('role')") == "gridcell"
    page.keyboard.press("Home")
    for _ in range(8):
        page.keyboard.press("ArrowUp")  # clamps at the first row
    for _ in range(i):
        page.keyboard.press("ArrowDown")
    for _ in range(j):
        page.keyboard.press("ArrowRight")
    assert page.evaluate("[document.activeElement.dataset.row, document.activeElement.dataset.col]") == [str(i), str(j)]
    assert f"快 → 猫：{pct_row(weights[i])[j]}" in readout.inner_text()
    assert root.locator('td[tabindex="0"]').count() == 1  # roving tabindex
    assert "示意" in root.locator(".widget-note").inner_text()


def test_query_focus_click_and_keyboard(page):
    root = open_widget(page, EXPLAINER, "query-focus")
    ex, _, weights = single_head("xiaoming")
    pressed = root.locator('button[aria-pressed="true"]')
    assert pressed.inner_text() == "他"
    assert bar_values(root) == pct_row(weights[ex.index("他")])
    top = int(np.argmax(weights[ex.index("他")]))
    # the sentence is tinted by weight: the most-attended word has the strongest tint
    tints = [float(b.get_attribute("style").split("--w:")[1].split(";")[0]) for b in root.locator(".qf-token").all()]
    assert int(np.argmax(tints)) == top

    root.locator(".qf-token", has_text="小红").click()
    assert bar_values(root) == pct_row(weights[ex.index("小红")])

    # Keyboard: focus the first word, Tab to the second (打), Enter makes it the query.
    root.locator(".qf-token").first.focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert pressed.inner_text() == "打"
    assert bar_values(root) == pct_row(weights[ex.index("打")])
    assert "打" in root.locator(".widget-live").inner_text()


def test_step_calculator_walks_through_four_steps(page):
    root = open_widget(page, EXPLAINER, "step-calculator")
    ex = get_example("four-words")
    q, k, v = ex.X @ ex.W_Q, ex.X @ ex.W_K, ex.X @ ex.W_V
    output, weights = scaled_dot_product_attention(q, k, v)
    scores = q @ k.T
    i = ex.index("吃")
    indicator = root.locator(".step-indicator")
    panel = root.locator(".step-panel")
    assert indicator.inner_text() == "第 1 步 / 共 4 步"
    root.get_by_role("button", name="吃").click()
    # ① q·k: the q vector, every k vector and every dot product
    text = panel.inner_text()
    assert "[" + ", ".join(fixed(x) for x in q[i]) + "]" in text
    for j in range(ex.length):
        assert "[" + ", ".join(fixed(x) for x in k[j]) + "]" in text
        assert fixed(scores[i, j]) in text
    prev, nxt = root.get_by_role("button", name="上一步"), root.get_by_role("button", name="下一步")
    assert prev.is_disabled()
    nxt.click()
    assert indicator.inner_text() == "第 2 步 / 共 4 步"
    assert all(fixed(s) in panel.inner_text() for s in scores[i] / math.sqrt(3))
    # Keyboard only from here: Enter on 下一步.
    nxt.focus()
    page.keyboard.press("Enter")
    assert indicator.inner_text() == "第 3 步 / 共 4 步"
    assert all(f"= {p}%" in panel.inner_text() for p in percent_row_even(list(weights[i])))  # one decimal
    # 我: 爱 and 吃 have equal scores, and show equal weights (not 35 % and 34 %)
    root.get_by_role("button", name="我").click()
    me = [float(w) for w in weights[ex.index("我")]]
    shown = percent_row_even(me)
    assert shown[ex.index("爱")] == shown[ex.index("吃")] and f"= {shown[ex.index('爱')]}%" in panel.inner_text()
    assert not root.locator(".step-total").count()  # the row adds up to 100.0: nothing to explain
    root.get_by_role("button", name="吃").click()
    nxt.focus()
    page.keyboard.press("Enter")
    assert indicator.inner_text() == "第 4 步 / 共 4 步"
    assert "[" + ", ".join(fixed(x, 3) for x in output[i]) + "]" in root.locator(".step-result").inner_text()
    assert nxt.is_disabled() and page.evaluate("document.activeElement.textContent") == "上一步"
    assert "第 4 步 / 共 4 步" in root.locator(".widget-live").inner_text()
    page.keyboard.press("Enter")  # 上一步
    assert indicator.inner_text() == "第 3 步 / 共 4 步"


def test_temperature_slider_updates_while_dragging_and_by_keyboard(page):
    root = open_widget(page, EXPLAINER, "temperature")
    ex = get_example("temperature-scores")
    slider = root.get_by_role("slider", name="温度 T")
    value = root.locator(".temp-value")
    assert value.inner_text() == "T = 1.0"
    assert bar_values(root) == pct_row(softmax(ex.scores, temperature=1.0))

    # Keyboard: two steps right = T 1.2; End = T 4.0 (spread out); Home = T 0.2 (concentrated).
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert value.inner_text() == "T = 1.2"
    assert bar_values(root) == pct_row(softmax(ex.scores, temperature=1.2))
    page.keyboard.press("End")
    hot = softmax(ex.scores, temperature=4.0)
    assert root.locator(".temp-max").inner_text() == pct_row(hot)[int(hot.argmax())]
    entropy = -(hot * np.log2(hot)).sum()
    assert root.locator(".temp-entropy").inner_text() == f"{entropy:.2f} 比特"
    assert root.locator(".temp-relative").inner_text() == pct(entropy / np.log2(ex.length))
    assert "均匀" in root.locator(".temp-verdict").inner_text()
    page.keyboard.press("Home")
    cold = softmax(ex.scores, temperature=0.2)
    assert (
        value.inner_text() == "T = 0.2" and root.locator(".temp-max").inner_text() == pct_row(cold)[int(cold.argmax())]
    )
    assert "集中" in root.locator(".temp-verdict").inner_text()

    # Dragging: the bars follow the thumb before the mouse button is released.
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 4, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.5, y, steps=5)
    mid = value.inner_text()
    t_mid = float(mid.split("=")[1])
    assert 1.5 <= t_mid <= 2.7, mid
    assert bar_values(root) == pct_row(softmax(ex.scores, temperature=t_mid))
    page.mouse.up()


def test_multi_head_row_highlight_in_every_head(page):
    root = open_widget(page, MODULE, "multi-head")
    ex = get_example("multi-head")
    _, weights = multi_head_attention(
        ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, ex.num_heads, mask=causal_mask(ex.length) if ex.causal else None
    )
    captions = root.locator(".mh-head figcaption").all_inner_texts()
    assert [c.replace("\n", "") for c in captions] == [f"头 {h}{label}" for h, label in enumerate(ex.head_labels)]
    tables = root.locator("table")
    assert tables.count() == ex.num_heads + 2  # the heads, the concat and the output

    def check_row(token: str) -> None:
        i = ex.index(token)
        rows = root.locator("tr.is-selected")
        assert rows.count() == ex.num_heads + 2
        assert all(t == token for t in rows.locator("th").all_inner_texts() if t)
        summary = root.locator(".mh-summary").inner_text()
        for h in range(ex.num_heads):
            top = int(np.argmax(weights[h, i]))
            assert f"“{token}”最关注“{ex.tokens[top]}”{pct_row(weights[h, i])[top]}" in summary

    check_row("他")
    root.get_by_role("button", name="小明").click()
    check_row("小明")
    # keyboard only
    root.get_by_role("button", name="小明").focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    check_row(ex.tokens[1])


@pytest.mark.parametrize("url", [MODULE, EXPLAINER])
def test_widgets_on_a_phone_fit_work_by_touch_and_do_not_shift_layout(mobile_page, url):
    page = mobile_page
    # Layout shifts caused by the widgets: any shift whose moved nodes are a widget or inside one.
    page.add_init_script("""window.__cls = 0; new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          const inWidget = (e.sources || []).some((s) => s.node && s.node.closest && s.node.closest(".widget"));
          if (!e.hadRecentInput && inWidget) window.__cls += e.value;
        } }).observe({ type: "layout-shift", buffered: true });""")
    page.goto(page.base + url)
    roots = page.locator(".widget[data-widget]")
    # widget scripts load as the reader scrolls towards them (theme/js/site/lazy-widgets.js): read the page through
    read_through(page)
    wait_widgets_ready(page, ".widget[data-widget]")
    assert roots.count() >= 2
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    if url == MODULE:
        root = page.locator('.widget[data-widget="heatmap"]:not(.cell-widget) > .widget-body')
        ex, _, weights = single_head("cat-fast", causal=True)
        cell = root.locator('td[data-row="1"][data-col="0"]')
        cell.scroll_into_view_if_needed()
        cell.tap()
        assert f"猫 → 小：{pct_row(weights[1])[0]}" in root.locator(".heat-readout").inner_text()
    else:
        root = page.locator('.widget[data-widget="query-focus"] > .widget-body')
        root.locator(".qf-token", has_text="生气").tap()
        ex, _, weights = single_head("xiaoming")
        assert bar_values(root) == pct_row(weights[ex.index("生气")])
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.evaluate("window.__cls") == 0


ROW_SUMS_JS = """root => {
  const sums = [];
  for (const tr of root.querySelectorAll('.heat-table tbody tr')) {
    const cells = [...tr.querySelectorAll('td.heat-cell')].map(td => td.textContent.trim());
    if (cells.length) sums.push(cells.reduce((a, c) => a + (/^\\d+$/.test(c) ? +c : 0), 0));
  }
  for (const list of root.querySelectorAll('.bars'))
    sums.push([...list.querySelectorAll('.bar-value')].reduce((a, v) => a + parseInt(v.textContent, 10), 0));
  return sums;
}"""


@pytest.mark.parametrize("url", [MODULE, EXPLAINER])
def test_every_shown_row_of_every_widget_adds_up_to_100(page, url):
    page.goto(page.base + url)
    mount_all_widgets(page)
    seen = 0
    for widget in page.locator(".widget .widget-body").all():
        states = [None]
        buttons = widget.locator(".seg-btn, .qf-token, .heat-mask-toggle, button[aria-pressed]")
        states += list(range(buttons.count()))
        for k in states:
            if k is not None:
                buttons.nth(k).click()
            sums = widget.evaluate(ROW_SUMS_JS)
            seen += len(sums)
            assert all(s == 100 for s in sums), (k, sums)
    assert seen >= 5  # rows were found and checked


CONTRAST_JS = """() => {
  const ctx = Object.assign(document.createElement('canvas'), { width: 1, height: 1 }).getContext('2d');
  const rgb = (css) => { ctx.clearRect(0, 0, 1, 1); ctx.fillStyle = css; ctx.fillRect(0, 0, 1, 1);
    return [...ctx.getImageData(0, 0, 1, 1).data].slice(0, 3); };
  const lum = (c) => { const [r, g, b] = c.map(v => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const out = [];
  for (const el of document.querySelectorAll('.heat-cell:not(.is-masked), .heat-static td[style], .qf-token')) {
    if (!el.textContent.trim()) continue;
    const style = getComputedStyle(el);
    const [a, b] = [lum(rgb(style.backgroundColor)), lum(rgb(style.color))].sort((x, y) => y - x);
    out.push({ w: el.style.getPropertyValue('--w'), ratio: (a + 0.05) / (b + 0.05) });
  }
  return out;
}"""  # noqa: E501


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_heat_cell_is_readable_in_the_browser(page, scheme):
    page.emulate_media(color_scheme=scheme)
    checked = 0
    for url in (MODULE, EXPLAINER):
        page.goto(page.base + url)
        mount_all_widgets(page)
        for cell in page.evaluate(CONTRAST_JS):
            checked += 1
            assert cell["ratio"] >= 4.5, (url, scheme, cell)
    assert checked > 100
