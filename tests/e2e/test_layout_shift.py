"""Layout stability (issue 7: CLS = 0), over http (from disk: test_file_journeys.py checks the preloads too).

The one cause of layout shift found on the course's pages is KaTeX's fonts arriving after the first paint
(a formula laid out with a fallback font re-flows when its own font arrives). The fix: each page preloads
exactly the KaTeX font files its formulas draw (builder/katex/fonts.py, theme/templates/base.html), which Chromium
fetches with the stylesheets and waits for before the first paint. Whether they arrive in time is a race
measured by bench/site_bench.py, not here; what is checked here deterministically:

* the preloads are exactly the fonts Chromium requests (one request each: a preload that does not match the
  stylesheet's request, e.g. a CORS preload over file://, would fetch the font twice or log an error);
* the build's reasoning about KaTeX's stylesheet agrees with Chromium on 16 of KaTeX's 20 faces, and leaves
  out formulas that are not shown when the page loads (a closed <details>);
* with the fonts already loaded, nothing else on the pages moves while they load (widgets, TOC, progress UI)
  at desktop and phone sizes.
"""

from __future__ import annotations

import pytest

from tests.conftest import build
from tests.e2e.conftest import _close_and_check, _open_context, serve

pytestmark = pytest.mark.e2e

# The order matters: a page opened after one that drew more KaTeX faces sees those faces "requested" again from
# Chromium's memory cache (same stylesheet), so pages that draw fewer faces come first.
COURSE_PAGES = [
    "index.html",
    "activation-function-explained.html",
    "attention-explained.html",
    "module-05-attention.html",
]

# Records every layout-shift entry (and what moved) from the very start of the page.
RECORD_SHIFTS = """
window.__layoutShifts = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    window.__layoutShifts.push({value: entry.value, hadRecentInput: entry.hadRecentInput,
      sources: (entry.sources || []).map((s) => {
        const el = s.node && (s.node.nodeType === 1 ? s.node : s.node.parentElement);
        return el ? `${el.tagName.toLowerCase()}.${String(el.className).split(' ').join('.')}` : '?';
      })});
  }
}).observe({type: 'layout-shift', buffered: true});
"""


def font_requests_after(page, url: str) -> tuple[list[str], list[str]]:
    """Open `url`; (every woff2 request it made, in order; the font preloads in its DOM), as absolute URLs."""
    start = len(page.watch.requests)
    page.goto(url, wait_until="load")
    page.evaluate("document.fonts.ready.then(() => true)")  # every font layout asked for has loaded
    requested = [u for u in page.watch.requests[start:] if u.split("?")[0].endswith(".woff2")]
    preloaded = page.evaluate("[...document.querySelectorAll('link[rel=preload][as=font]')].map((l) => l.href)")
    return requested, preloaded


def assert_preloads_are_the_requests(requested: list[str], preloaded: list[str], where: str) -> None:
    assert len(requested) == len(set(requested)), f"{where}: a font was fetched twice: {sorted(requested)}"
    assert sorted(requested) == sorted(preloaded), (
        f"{where}: requested {sorted(requested)}, preloaded {sorted(preloaded)}"
    )


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_course_pages_preload_exactly_the_fonts_they_draw(browser, base_url, viewport):
    options = (
        {"viewport": {"width": 1280, "height": 800}}
        if viewport == "desktop"
        else {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
    )
    context, page = _open_context(browser, base_url, **options)
    try:
        for name in COURSE_PAGES:
            requested, preloaded = font_requests_after(page, base_url + name)
            assert preloaded, f"{name}: no font preloads (the course's pages all have formulas)"
            assert_preloads_are_the_requests(requested, preloaded, name)
    finally:
        _close_and_check(context, page)


def test_preloads_match_under_a_github_pages_sub_path(browser, subpath_base):
    context, page = _open_context(browser, subpath_base, viewport={"width": 1280, "height": 800})
    try:
        requested, preloaded = font_requests_after(page, subpath_base + "module-05-attention.html")
        assert preloaded and all("/some-repo/assets/katex/fonts/" in u for u in preloaded)
        assert_preloads_are_the_requests(requested, preloaded, "module-05-attention.html under /some-repo/")
    finally:
        _close_and_check(context, page)


# ------------------------------------------------------------------------------------------ KaTeX's faces

FACES_PAGE = r"""---
title: 各种字体
kind: explainer
---
粗体 $\mathbf{W}$，斜体 $\mathit{abc}$，粗斜 $\textbf{\textit{bi}}$，粗希腊 $\boldsymbol{\alpha}$，变量 $x$。

集合 $\mathbb{R}$，花体 $\mathcal{L}$，手写 $\mathscr{F}$，无衬线 $\mathsf{S}$、$\textsf{\textbf{B}}$、$\textsf{\textit{I}}$，等宽 $\mathtt{t}$。

行内求和 $\sum_i a_i$，括号 $\bigl( \Bigg( \left( \frac{\frac{a}{b}}{c} \right)$，汉字 $\text{中文}$。

$$
\sum_{i=1}^{n} \left( \begin{matrix} a \\ b \\ c \\ d \\ e \\ f \end{matrix} \right) \int_0^1
$$

<details>
<summary>展开</summary>

只在这里用到的字体 $\mathfrak{g}$

</details>
"""  # noqa: E501 (a line of prose with many formulas)
# Only a subscript: the one character drawn with KaTeX_Main is the zero-width space KaTeX puts in its
# vertical lists, and Chromium still fetches the font for it.
SUBSCRIPT_PAGE = "---\ntitle: 下标\nkind: explainer\n---\n只有下标 $x_i$。\n"


@pytest.fixture(scope="module")
def faces_site(tmp_path_factory):
    content = tmp_path_factory.mktemp("faces") / "content"
    content.mkdir()
    site_yml = "series: 测试系列\ntitle: 测试课程\nkinds:\n  explainer: {title: 专题}\nplanned: []\n"
    (content / "site.yml").write_text(site_yml, encoding="utf-8")
    (content / "index.md").write_text("---\ntitle: 首页\nkind: index\n---\n欢迎。\n", encoding="utf-8")
    (content / "faces.md").write_text(FACES_PAGE, encoding="utf-8")
    (content / "subscript.md").write_text(SUBSCRIPT_PAGE, encoding="utf-8")
    out = content.parent / "site"
    build(content, out)  # the tests' cache (.test-cache), never the developer's .cache
    server = serve(out)
    yield {"http": f"http://127.0.0.1:{server.server_address[1]}/", "file": out.as_uri() + "/"}
    server.shutdown()


def test_the_build_predicts_chromium_font_requests_for_all_kinds_of_formulas(browser, faces_site):
    base = faces_site["http"]
    context, page = _open_context(browser, base, viewport={"width": 1280, "height": 800})
    try:
        requested, preloaded = font_requests_after(page, base + "faces.html")
        assert_preloads_are_the_requests(requested, preloaded, "faces.html")
        names = {u.rsplit("/", 1)[1] for u in preloaded}
        assert {
            "KaTeX_Main-Bold.woff2",
            "KaTeX_Main-BoldItalic.woff2",
            "KaTeX_Math-BoldItalic.woff2",
            "KaTeX_AMS-Regular.woff2",
            "KaTeX_Caligraphic-Regular.woff2",
            "KaTeX_Script-Regular.woff2",
            "KaTeX_SansSerif-Bold.woff2",
            "KaTeX_Typewriter-Regular.woff2",
            "KaTeX_Size1-Regular.woff2",
            "KaTeX_Size2-Regular.woff2",
            "KaTeX_Size4-Regular.woff2",
        } <= names, sorted(names)

        # the closed <details>' formula is not drawn, so its font is neither preloaded nor fetched … until opened
        assert not any("Fraktur" in u for u in requested)
        start = len(page.watch.requests)
        page.click("summary")
        page.wait_for_function("[...document.fonts].some((f) => f.family === 'KaTeX_Fraktur' && f.status === 'loaded')")
        assert any("KaTeX_Fraktur-Regular.woff2" in u for u in page.watch.requests[start:])
    finally:
        _close_and_check(context, page)
    # A fresh context for the next page: one opened after faces.html in the same context is shown the faces
    # that page drew (Fraktur, once its <details> was opened) "requested" again from Chromium's memory cache
    # (same stylesheet; see COURSE_PAGES). Chromium 150 here does so every time over http.
    context, page = _open_context(browser, base, viewport={"width": 1280, "height": 800})
    try:
        requested, preloaded = font_requests_after(page, base + "subscript.html")
        assert_preloads_are_the_requests(requested, preloaded, "subscript.html")
        assert sorted(u.rsplit("/", 1)[1] for u in preloaded) == ["KaTeX_Main-Regular.woff2", "KaTeX_Math-Italic.woff2"]
    finally:
        _close_and_check(context, page)


# ------------------------------------------------------------------------------------------ everything else

# Draws the formulas with a system font, so no web font can arrive late: whatever still moves, moves because
# of the page itself. Inserted as soon as <head> exists (init scripts run before the document has any element).
MATH_IN_A_SYSTEM_FONT = """
new MutationObserver((records, observer) => {
  if (!document.head) return;
  const style = document.createElement('style');
  style.textContent = '.katex, .katex * { font-family: serif !important; }';
  document.head.prepend(style);
  observer.disconnect();
}).observe(document, {childList: true, subtree: true});
"""


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_nothing_else_moves_while_a_page_loads(browser, base_url, viewport):
    """Widgets hydrating, the TOC, the progress and reading UI must not move anything: with the formulas in a
    system font (the web-font race is the benchmark's business), a page loads without a single layout shift."""
    options = (
        {"viewport": {"width": 1280, "height": 800}}
        if viewport == "desktop"
        else {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
    )
    context, page = _open_context(browser, base_url, **options)
    page.add_init_script(MATH_IN_A_SYSTEM_FONT)
    page.add_init_script(RECORD_SHIFTS)
    try:
        for name in COURSE_PAGES:
            page.goto(base_url + name, wait_until="load")
            assert page.evaluate("getComputedStyle(document.querySelector('.katex')).fontFamily") == "serif"
            page.evaluate("new Promise((resolve) => setTimeout(resolve, 500))")  # late hydration included
            shifts = page.evaluate("window.__layoutShifts")
            assert shifts == [], f"{name}: {shifts}"
    finally:
        _close_and_check(context, page)
