"""The `training-curve` widget in Chromium, on the course's widget fixture site (its fixture.md's page, where the
kind's script is loaded): mounted again and again on the same root as a learner's training loop does it (a redraw
updates the one chart in place — paths, ticks, the legend's latest values, the status — with no new listener, the
same height, focus and scroll kept, and fast), the live region speaking only at the end (or every 10 s), bad data
shown as a sentence, and axe-core finding nothing in light and dark, at 1280 and 390 px (where its text stays
≥ 12 px). The screenshots for people (COURSE_SCREENSHOTS=1) go to test-artifacts/."""

from __future__ import annotations

import json
import math
import os

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import DESKTOP, PHONE, _close_and_check, _open_context, artifact, serve, wait_frames
from tests.e2e.test_accessibility import AXE

pytestmark = pytest.mark.e2e

PAGE = "widget-training-curve.html"
ROOT = '.widget[data-widget="training-curve"]'


@pytest.fixture(scope="module")
def fixture_base(course_widget_site):
    server = serve(course_widget_site)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def curve(n: int, *, done: bool = False, shift: float = 0.0) -> dict:
    """A made-up run of `n` steps: two series falling from about ln 12, a reference, a marker."""
    return {
        "title": "重复序列任务的损失",
        "x_label": "训练步数",
        "y_label": "损失（nats）",
        "x_max": 3000,
        "series": [
            {"name": "全部位置", "points": [[i, 2.48 * math.exp(-i / 900) + 0.3 + shift] for i in range(n)]},
            {
                "name": "可以照抄的位置",
                "points": [[i, 2.49 / (1 + math.exp((i - 1200) / 150)) + 0.02] for i in range(n)],
            },
        ],
        "references": [{"name": "均匀猜测 ln 12", "value": 2.48}],
        "markers": [{"x": 1200, "label": "越过门槛"}],
        "status": f"第 {n} 步 · 用时 {n / 100:.1f} 秒",
        "done": done,
    }


def open_widget(browser, base: str, size: dict, scheme: str = "light"):
    context, page = _open_context(browser, base, color_scheme=scheme, **size)
    page.goto(base + PAGE)
    root = page.locator(ROOT).first
    root.evaluate("w => w.scrollIntoView({block: 'start'})")
    expect(root).to_have_attribute("data-ready", "true", timeout=30_000)
    return context, page, root


# What a redraw must leave alone, read before and after: the chart's elements (marked), how many listeners and
# observers the page added in between (counted from here on), the widget's height, the focus and the scroll.
INSTRUMENT_JS = """root => {
  const counts = { listeners: 0, observers: 0 };
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (...args) { counts.listeners += 1; return add.apply(this, args); };
  const RO = window.ResizeObserver;
  window.ResizeObserver = class extends RO { constructor(cb) { super(cb); counts.observers += 1; } };
  window.__tcCounts = counts;
  root.querySelector('.widget-body svg.tc-chart').dataset.first = 'yes';
}"""

STATE_JS = """root => {
  const body = root.querySelector('.widget-body');
  const svg = body.querySelector('svg.tc-chart');
  return {
    svgs: body.querySelectorAll('svg').length - body.querySelectorAll('svg.tc-swatch').length,
    first: svg.dataset.first || null,
    paths: [...svg.querySelectorAll('.tc-line')].map((p) => p.getAttribute('d')),
    vertices: [...svg.querySelectorAll('.tc-line')].map((p) => (p.getAttribute('d').match(/[ML]/g) || []).length),
    xTicks: [...svg.querySelectorAll('.tc-tick[text-anchor=middle]')].map((t) => t.textContent),
    legend: [...body.querySelectorAll('.tc-legend li')].map((li) => li.textContent),
    status: body.querySelector('.tc-status').textContent,
    live: body.querySelector('[aria-live]').textContent,
    desc: svg.querySelector('desc').textContent,
    height: root.getBoundingClientRect().height,
    focus: document.activeElement === body.querySelector('summary'),
    scroll: scrollY,
    counts: window.__tcCounts ? { ...window.__tcCounts } : null,
  };
}"""

MOUNT_JS = "([sel, data]) => Course.widgets['training-curve'](document.querySelector(sel), data)"


def test_mounting_again_updates_the_one_chart_in_place(browser, fixture_base):
    context, page, root = open_widget(browser, fixture_base, DESKTOP)
    try:
        page.evaluate(MOUNT_JS, [ROOT, curve(1500)])
        root.evaluate(INSTRUMENT_JS)
        root.locator("summary").focus()
        page.evaluate("window.scrollBy(0, 37)")
        before = root.evaluate(STATE_JS)
        assert before["svgs"] == 1 and before["legend"] == ["全部位置0.77", "可以照抄的位置0.32"]
        assert before["status"] == "第 1500 步 · 用时 15.0 秒"
        page.evaluate(MOUNT_JS, [ROOT, curve(3000)])
        after = root.evaluate(STATE_JS)
        assert after["svgs"] == 1 and after["first"] == "yes"  # the same SVG element, updated
        assert after["paths"] != before["paths"] and all(n <= 600 for n in after["vertices"])
        assert after["legend"] == ["全部位置0.39", "可以照抄的位置0.02"]  # each series' latest value
        assert after["status"] == "第 3000 步 · 用时 30.0 秒" and "0.39" in after["desc"]
        assert after["counts"] == {"listeners": 0, "observers": 0}  # nothing added by the redraw
        assert after["height"] == before["height"] and after["focus"] and after["scroll"] == before["scroll"]
        assert after["live"] == "" and before["live"] == ""  # not done, not 10 s yet: the live region is silent
        # the run ends: said once, politely
        page.evaluate(MOUNT_JS, [ROOT, curve(3000, done=True)])
        assert root.evaluate(STATE_JS)["live"] == "训练结束。第 3000 步 · 用时 30.0 秒"
        # the data table follows the redraws while it is open
        root.locator("summary").click()
        page.evaluate(MOUNT_JS, [ROOT, curve(3000, shift=1.0)])
        rows = root.locator(".widget-body .tc-details tbody tr")
        assert rows.count() <= 12 and rows.last.locator("th").inner_text() == "2999"
        assert rows.last.locator("td").first.inner_text() == "1.39"
        # bad data: a sentence in the box, no exception; good data again: the chart is back
        page.evaluate(MOUNT_JS, [ROOT, {**curve(10), "series": [{"name": "a", "points": [[0, None]]}]}])
        expect(root.locator(".widget-body .tc-problem")).to_have_text(
            "无法画出训练曲线：series[0].points[0] 应是两个有限的数 [x, y]，收到 [0,null]。"
        )
        page.evaluate(MOUNT_JS, [ROOT, "not a curve"])
        expect(root.locator(".widget-body .tc-problem")).to_contain_text("数据应是一个对象")
        page.evaluate(MOUNT_JS, [ROOT, curve(20)])
        assert root.evaluate(STATE_JS)["svgs"] == 1
    finally:
        _close_and_check(context, page)


TIMING_JS = """([sel, a, b]) => {
  const root = document.querySelector(sel);
  const mount = Course.widgets['training-curve'];
  const times = [];
  const laidOut = [];  // and the style and layout the browser does for it (forced here, painted later anyway)
  for (let k = 0; k < 30; k += 1) {
    const data = k % 2 ? a : b;
    data.status = 'round ' + k;  // a new status every time, like a run's
    const t = performance.now();
    mount(root, data);
    times.push(performance.now() - t);
    root.getBoundingClientRect();
    laidOut.push(performance.now() - t);
  }
  const median = (xs) => xs.sort((x, y) => x - y)[15];
  return { median: median(times), worst: times[29], withLayout: median(laidOut) };
}"""


def test_a_redraw_of_two_series_of_3000_points_is_cheap(browser, fixture_base):
    context, page, root = open_widget(browser, fixture_base, DESKTOP)
    try:
        a, b = curve(3000), curve(3000, shift=0.01)
        page.evaluate(MOUNT_JS, [ROOT, a])
        timing = page.evaluate(TIMING_JS, [ROOT, a, b])
        print(f"training-curve redraw, 2 × 3000 points: {json.dumps(timing)} ms")
        assert timing["median"] < 5, timing  # the loop sends every ≥ 0.25 s; a redraw must not be felt
    finally:
        _close_and_check(context, page)


def test_a_cells_widget_box_is_drawn_and_redrawn_the_same_way(browser, fixture_base):
    """A code cell's widget: a bare `.widget.cell-widget` box (theme/js/cells/output.js), mounted many times."""
    context, page, _ = open_widget(browser, fixture_base, DESKTOP)
    try:
        page.evaluate(
            """() => { const box = document.createElement('div'); box.className = 'widget cell-widget';
          box.id = 'cell-widget-1'; box.dataset.widget = 'training-curve';
          box.innerHTML = '<div class="widget-body">正在加载图表…</div>';
          document.querySelector('main').append(box); }"""
        )
        for n in (0, 1, 50, 400):
            page.evaluate(MOUNT_JS, ["#cell-widget-1", curve(n)])
        state = page.locator("#cell-widget-1").evaluate(STATE_JS)
        assert state["svgs"] == 1 and state["legend"] == ["全部位置1.89", "可以照抄的位置2.50"]
        assert page.locator("#cell-widget-1 .tc-chart").get_attribute("aria-labelledby").startswith("cell-widget-1-")
    finally:
        _close_and_check(context, page)


def axe_on_widget(page) -> list[dict]:
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    return page.evaluate(
        """async (sel) => {
      const r = await axe.run({ include: [[sel]] }, { resultTypes: ['violations'], runOnly: { type: 'tag',
        values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } });
      return r.violations.map((v) => ({ id: v.id, impact: v.impact,
        nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
    }""",
        ROOT,
    )


TEXT_SIZES_JS = """sel => [...document.querySelectorAll(sel + ' .widget-body svg text')].map((t) => {
  const ctm = t.getScreenCTM();
  return { text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize) * Math.hypot(ctm.a, ctm.b) };
})"""


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280", "390"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_accessibility_violation_and_legible_in_both_schemes(browser, fixture_base, size, scheme):
    context, page, root = open_widget(browser, fixture_base, size, scheme)
    width = size["viewport"]["width"]
    try:
        found = [{"state": "as built", **v} for v in axe_on_widget(page)]
        page.evaluate(MOUNT_JS, [ROOT, curve(2000)])
        page.evaluate(MOUNT_JS, [ROOT, curve(3000, done=True)])
        root.locator("summary").click()
        wait_frames(page)
        found += [{"state": "redrawn, table open", **v} for v in axe_on_widget(page)]
        assert not found, json.dumps(found, ensure_ascii=False, indent=1)
        small = [t for t in page.evaluate(TEXT_SIZES_JS, ROOT) if t["size"] < 12 - 1e-6]
        assert not small, small[:5]
        box = root.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width  # no sideways scroll
        if os.environ.get("COURSE_SCREENSHOTS"):
            root.locator("summary").click()  # closed again: the chart as a reader first sees it
            root.screenshot(path=str(artifact(f"training-curve-{width}-{scheme}.png")))
    finally:
        _close_and_check(context, page)
