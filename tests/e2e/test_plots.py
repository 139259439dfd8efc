"""Python that draws, in a real Chromium over http and file:// (issue 15): matplotlib figures as <img>, the
optional packs loaded only by a cell that imports matplotlib, `show_attention` mounting the site's heatmap,
and — for every page of the course with code cells — the reader's run printing and drawing exactly what
the build stored (the build runs the cells in the same Pyodide, builder/cells/pyodide_cells.cjs).
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import artifact

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("plots")]

EXPLAINER = "attention-explained.html"
MODULE = "module-05-attention.html"
PLOT_CELL = "#cell-temperature-curves"
SHOW_CELL = "#cell-show-my-attention"

NO_PREFETCH = (
    "window.Course = Object.assign(window.Course || {}, {options: Object.assign("
    "(window.Course || {}).options || {}, {noPrefetch: true})});"
)
# Every status line a cell shows, in order (the download progress flashes by between two polls).
RECORD_STATUS = """
window.__statuses = [];
new MutationObserver((records) => {
  for (const r of records) {
    const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
    if (el && el.closest && el.closest('.cell-status')) window.__statuses.push(el.closest('.cell-status').textContent);
  }
}).observe(document, {subtree: true, childList: true, characterData: true});
"""

# Pixels of an <img> that are not (near) white, and how many distinct colours it has: a blank or a
# one-colour figure fails (the figure is drawn on white, lines in the Okabe–Ito colours).
PIXELS = """async (img) => {
  await img.decode();
  const c = document.createElement('canvas');
  c.width = img.naturalWidth; c.height = img.naturalHeight;
  const g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data;
  let ink = 0; const colours = new Set();
  for (let i = 0; i < d.length; i += 4) {
    if (d[i] < 235 || d[i + 1] < 235 || d[i + 2] < 235) ink++;
    colours.add((d[i] >> 4) << 8 | (d[i + 1] >> 4) << 4 | (d[i + 2] >> 4));
  }
  return {w: img.naturalWidth, h: img.naturalHeight, ink: ink / (d.length / 4), colours: colours.size,
          src: img.src.slice(0, 5)};
}"""

SHA256_OF_IMAGES = """async (sel) => {
  const out = [];
  for (const img of document.querySelectorAll(sel)) {
    const buf = await (await fetch(img.src)).arrayBuffer();
    const h = await crypto.subtle.digest('SHA-256', buf);
    out.push([...new Uint8Array(h)].map((b) => b.toString(16).padStart(2, '0')).join(''));
  }
  return out;
}"""


def run_cell(page, cell: str, timeout: float = 180_000) -> str:
    page.click(f"{cell} [data-action='run']")
    page.wait_for_function(
        "sel => /完成|出错|无法/.test(document.querySelector(sel + ' .cell-status').textContent)",
        arg=cell,
        timeout=timeout,
    )
    return page.text_content(f"{cell} .cell-status")


def optional_asset_names(page) -> list[str]:
    """The wheels no start loads (matplotlib & co.): runtime-index.js lists what the worker fetches at start
    (`boot`); the others come when a cell imports them (builder/runtime/site.py)."""
    page.wait_for_function("!!(Course.python && Course.python.index)")
    return page.evaluate("""() => {
      const index = Course.python.index;
      return index.assets.filter((a) => a.name.endsWith(".whl") && !index.boot.includes(a.name)).map((a) => a.name);
    }""")


def test_a_matplotlib_cell_draws_a_figure_and_shows_the_download(page):
    page.add_init_script(NO_PREFETCH)
    page.add_init_script(RECORD_STATUS)
    page.goto(page.base + EXPLAINER)
    # The stored figure is the build's PNG file (the <img>'s src, loading="lazy"), held back by the <picture>'s
    # empty <source> and fetched only once the cell nears the view (theme/js/site/lazy-figures.js), in a box of its
    # final size from the start.
    static_img = page.locator(f"{PLOT_CELL} img.cell-figure")
    stored = static_img.get_attribute("src")
    assert re.fullmatch(r"assets/figures/[0-9a-f]{20}\.png", stored)
    assert static_img.get_attribute("loading") == "lazy"
    assert page.locator(f"{PLOT_CELL} picture source[data-held]").count() == 1
    assert not [u for u in page.watch.requests if "assets/figures/" in u], "a figure far below was fetched at load"
    box = static_img.bounding_box()
    static_img.scroll_into_view_if_needed()
    page.wait_for_function(
        f"(i => i && i.complete && i.currentSrc.endsWith('/{stored}') && i.naturalWidth > 0)"
        f"(document.querySelector('{PLOT_CELL} img.cell-figure'))"
    )
    assert page.locator(f"{PLOT_CELL} picture source[data-held]").count() == 0
    assert static_img.evaluate("i => [i.naturalWidth, i.naturalHeight]") == [921, 547]
    assert round(static_img.bounding_box()["height"]) == round(box["height"])  # loading it moved nothing
    assert run_cell(page, PLOT_CELL).startswith("完成"), page.text_content(f"{PLOT_CELL} .cell-log")
    img = page.query_selector(f"{PLOT_CELL} img.cell-figure")
    live = page.evaluate(PIXELS, img)
    # 6.4 × 3.8 in at 144 dpi (cell_runtime.FIGURE_DPI), shown at 640 × 380 CSS px
    assert (live["src"], live["w"], live["h"]) == ("blob:", 921, 547), live
    assert img.get_attribute("width") == "640" and img.get_attribute("height") == "380"
    assert 0.02 < live["ink"] < 0.5 and live["colours"] > 20, live  # lines, text and axes: neither blank nor a block
    assert img.get_attribute("alt") == "图：“他”的注意力权重随温度的变化"
    # the packs' download was shown in bytes while they loaded
    statuses = page.evaluate("window.__statuses")
    assert any(re.match(r"正在加载 .*matplotlib.*\d+\.\d / \d+\.\d MB", s) for s in statuses), statuses
    # no warning about missing CJK glyphs: the Chinese title and labels had a font
    assert "missing from" not in page.text_content(f"{PLOT_CELL} .cell-log")
    names = optional_asset_names(page)
    loaded = [u for u in page.watch.requests if any(n in u for n in names)]
    assert any("matplotlib-" in u for u in loaded), loaded
    page.locator(PLOT_CELL).screenshot(
        path=str(artifact(f"plot-cell-{'file' if page.base.startswith('file') else 'http'}.png"))
    )


def test_stopping_the_first_plotting_run_brings_python_back(page):
    """停止 while the first plotting run still loads matplotlib & co.: a fresh worker starts, and the next run works
    (and can draw)."""
    page.add_init_script(NO_PREFETCH)
    page.add_init_script(RECORD_STATUS)
    page.goto(page.base + EXPLAINER)
    page.click(f"{PLOT_CELL} [data-action='run']")
    # stopped while it still sets up: its packages loading (the cell's status says so, in bytes)
    page.wait_for_function(
        "sel => /正在加载 .*matplotlib/.test(document.querySelector(sel + ' .cell-status').textContent)",
        arg=PLOT_CELL,
        timeout=120_000,
    )
    page.click(f"{PLOT_CELL} [data-action='stop']")
    page.wait_for_function(
        "sel => /已停止/.test(document.querySelector(sel + ' .cell-status').textContent)", arg=PLOT_CELL, timeout=10_000
    )
    assert page.query_selector(f"{PLOT_CELL} img.cell-figure[src^='blob:']") is None
    assert run_cell(page, PLOT_CELL).startswith("完成"), page.text_content(f"{PLOT_CELL} .cell-log")
    live = page.evaluate(PIXELS, page.query_selector(f"{PLOT_CELL} img.cell-figure"))
    assert live["src"] == "blob:" and 0.02 < live["ink"] < 0.5, live


def test_stored_figures_show_without_javascript(browser, http_base, file_base):
    """No script, no lazy loader: the <picture>'s held source does not match (scripting: enabled), and the <img>
    loads the build's PNG as it nears (loading="lazy")."""
    for base in (http_base, file_base):
        context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
        page = context.new_page()
        page.goto(base + EXPLAINER)
        img = page.locator(f"{PLOT_CELL} img.cell-figure")
        img.scroll_into_view_if_needed()
        page.wait_for_function(
            f"(i => i.complete && i.naturalWidth > 0)(document.querySelector('{PLOT_CELL} img.cell-figure'))",
            timeout=15_000,
        )
        assert img.evaluate(
            "i => [i.naturalWidth, i.naturalHeight, new URL(i.currentSrc).pathname.split('/').pop()]"
        ) == [921, 547, img.get_attribute("src").split("/")[-1]], base
        context.close()


def test_a_page_that_never_plots_loads_no_matplotlib_bytes(page):
    page.add_init_script(NO_PREFETCH)
    page.goto(page.base + MODULE)
    assert run_cell(page, "#cell-attention-fn").startswith("完成")
    names = optional_asset_names(page)
    assert names and any(n.startswith("matplotlib-") for n in names)
    assert page.evaluate("Course.python.getRuntime().state") in ("ready", "running")
    loaded = [u for u in page.watch.requests if any(n in u for n in names)]
    assert loaded == [], loaded


def test_show_attention_mounts_the_interactive_heatmap(page):
    page.add_init_script(NO_PREFETCH)
    page.goto(page.base + MODULE)
    # the build stored the widget: it is mounted before anything runs (the page loads heatmap.js for it as it
    # nears the viewport: theme/js/site/lazy-widgets.js)
    page.locator(SHOW_CELL).scroll_into_view_if_needed()
    page.wait_for_function(f"document.querySelector('{SHOW_CELL} .cell-widgets .widget').dataset.ready === 'true'")
    assert run_cell(page, "#cell-attention-fn").startswith("完成")  # imports numpy as np for the cells below
    assert run_cell(page, "#cell-single-head").startswith("完成")
    assert run_cell(page, SHOW_CELL).startswith("完成")
    page.wait_for_function(
        f"[...document.querySelectorAll('{SHOW_CELL} .cell-widgets .widget')].every(w => w.dataset.ready === 'true')"
    )
    grid = page.locator(f"{SHOW_CELL} table[role='grid']")
    assert grid.count() == 1
    assert grid.locator("td[role='gridcell']").count() == 36  # 6 tokens × 6
    # single-head's causal softmax: the first token sees only itself → 100 %, the rest of its row 0 %
    assert grid.locator("td[role='gridcell']").first.text_content() == "100"
    first = grid.locator("td[role='gridcell'][tabindex='0']")
    first.focus()
    page.keyboard.press("ArrowDown")
    readout = page.text_content(f"{SHOW_CELL} .heat-readout")
    assert readout.startswith("第 2 行第 1 列：猫 → 小："), readout
    bars = page.locator(f"{SHOW_CELL} ol.bars li")
    assert bars.count() == 6
    values = [int(v.rstrip("%")) for v in bars.locator(".bar-value").all_text_contents()]
    assert sum(values) == 100  # whole percents of one softmax row (pctRow keeps the sum)


@pytest.fixture(params=["http", "file"])
def cell_pages(request, built_site, http_base, file_base):
    """Over http every page with code cells; from disk (what differs is how the runtime reads its files) the first
    page that draws figures, so matplotlib's packages are read from disk too."""
    pages = sorted(p.name for p in built_site.glob("*.html") if 'class="code-cell"' in p.read_text("utf-8"))
    if request.param == "http":
        return http_base, pages, built_site
    drawing = [name for name in pages if "cell-figure" in (built_site / name).read_text("utf-8")]
    return file_base, drawing[:1], built_site


def stored_image_hashes(page, site) -> list[str]:
    """sha256 of the build's figure files the page shows (read from disk: file:// pages cannot fetch them)."""
    import hashlib

    srcs = page.eval_on_selector_all(".code-cell img.cell-figure", "els => els.map(e => e.getAttribute('src'))")
    return [hashlib.sha256((site / src).read_bytes()).hexdigest() for src in srcs]


def where_the_cells_stand(page) -> str:
    """The bar's status and each cell's, for a failure message (bounded: the page may be the thing that hangs)."""
    from tests.e2e.conftest import evaluate_or_stalled

    return evaluate_or_stalled(
        page,
        """() => JSON.stringify({
        bar: document.querySelector('.cells-bar-status')?.textContent,
        cells: [...document.querySelectorAll('.code-cell')]
          .map(c => `${c.id}: ${c.querySelector('.cell-status')?.textContent}`)})""",
    )


# What a reader who solved a page's exercises has: each exercise's passing code in the course progress (the
# reference answers here), which the page hands to Python before a cell below runs (`:defines:`).
SOLVED = """([slug, codes]) => {
  const exercises = {};
  for (const [id, code] of Object.entries(codes)) {
    exercises[id] = {passed: true, attempts: 1, failures: 0, hints: 0, code};
  }
  localStorage.setItem('attention-course:progress', JSON.stringify({v: 1, pages: {[slug]: {exercises}}}));
}"""
BUILT = ".code-cell:not([data-exercise]):not([data-browser-only])"  # the cells the build ran


def test_every_cell_of_the_course_prints_and_draws_in_the_browser_what_the_build_stored(browser, cell_pages):
    """Generic over the pages: a new page's cells are checked without touching this test. The cells the build ran
    are compared; on a page with `:browser-only:` cells (a minutes-long training the build leaves to the reader)
    those are run one by one, as the build did, instead of 全部运行."""
    from tests.e2e.conftest import _close_and_check, _open_context, exercise_solutions

    base, pages, site = cell_pages
    assert pages, "the course has pages with code cells"
    for name in pages:
        context, page = _open_context(browser, base, viewport={"width": 1280, "height": 900})
        page.add_init_script(NO_PREFETCH)
        page.goto(base + name)
        if page.locator(".exercise[data-defines]").count():
            page.evaluate(SOLVED, [name.removesuffix(".html"), exercise_solutions(site, name)])
            page.reload()
        build_logs = page.eval_on_selector_all(f"{BUILT} .cell-log", "els => els.map(e => e.textContent)")
        build_images = stored_image_hashes(page, site)
        build_widgets = page.eval_on_selector_all(
            f"{BUILT} .cell-widgets script.widget-data", "els => els.map(e => JSON.parse(e.textContent))"
        )
        if page.locator(".code-cell[data-browser-only]").count():
            for cell in page.eval_on_selector_all(BUILT, "els => els.map(e => '#' + e.id)"):
                assert run_cell(page, cell).startswith("完成"), f"{name} {cell}: {where_the_cells_stand(page)}"
        else:
            page.click(".cells-run-all")
            try:
                page.wait_for_function(
                    "/全部运行完成|中断/.test(document.querySelector('.cells-bar-status').textContent)",
                    timeout=300_000,
                )
            except Exception as err:  # say where the page stood, not just that it timed out
                raise AssertionError(f"{name}: run-all did not finish: {where_the_cells_stand(page)}") from err
            assert page.text_content(".cells-bar-status") == "全部运行完成。", name
        assert page.eval_on_selector_all(f"{BUILT} .cell-log", "els => els.map(e => e.textContent)") == build_logs, name
        assert page.evaluate(SHA256_OF_IMAGES, f"{BUILT} img.cell-figure") == build_images, name
        live_widgets = page.evaluate(f"""() => [...document.querySelectorAll('{BUILT} .cell-widgets .widget')]
            .map(w => w.querySelector('table[role=grid]') ? 'heatmap'
              : w.querySelector('ol.bars') ? 'bars' : 'none')""")
        assert live_widgets == ["bars" if w.get("bars") else "heatmap" for w in build_widgets], name
        _close_and_check(context, page)
