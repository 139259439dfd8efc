"""A 390 px phone: every figure's text is at least 12 CSS px, display math never runs off the screen without a
scrolling affordance, a widget's column headers never run together, closing punctuation stays with its formula."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT
from tests.e2e.conftest import ALL_LAID_OUT_CSS, FRAMES_JS, mount_all_widgets, wait_frames

pytestmark = pytest.mark.e2e

PAGES = sorted(p.stem for p in (ROOT / "content").glob("*.md"))

TEXT_SIZES_JS = """() => [...document.querySelectorAll('.figure svg text')].map(t => {
  const ctm = t.getScreenCTM();
  const size = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(ctm.a, ctm.b);
  return { text: t.textContent.trim(), size, figure: t.closest('svg').querySelector('title').textContent };
})"""

OVERFLOW_JS = """() => [...document.querySelectorAll('.math-display, .figure-scroll')].map(el => {
  const r = el.getBoundingClientRect();
  return { kind: el.className, right: r.right, overflowing: el.scrollWidth > el.clientWidth + 1,
           marked: el.classList.contains('is-overflowing'), tabindex: el.getAttribute('tabindex'),
           label: el.getAttribute('aria-label'), mask: getComputedStyle(el).maskImage,
           hint: el.classList.contains('figure-scroll') ?
             getComputedStyle(el.parentElement.querySelector('.figure-scroll-hint')).visibility : null };
})"""


@pytest.mark.parametrize("slug", PAGES)
def test_figure_text_is_at_least_12px_on_a_phone(mobile_page, slug):
    page = mobile_page
    page.goto(page.base + f"{slug}.html")
    sizes = page.evaluate(TEXT_SIZES_JS)
    small = [s for s in sizes if s["size"] < 12 - 1e-6]
    assert not small, small[:5]


@pytest.mark.parametrize("slug", PAGES)
def test_wide_boxes_scroll_with_an_affordance_and_never_cut_off(mobile_page, slug):
    page = mobile_page
    page.goto(page.base + f"{slug}.html")
    # Measured once the KaTeX fonts are in: a formula's width changes when they arrive (late on file:// under
    # load), and with it which boxes overflow. Then two frames for the ResizeObserver's callbacks.
    page.evaluate("() => document.fonts.ready")
    wait_frames(page)
    # A box is marked when it is laid out, and a section of the page only when the reader gets near it
    # (content-visibility: auto, theme/css/base.css): bring each box on screen, as reading the page does.
    page.evaluate(
        """async () => {
      const frames = """
        + FRAMES_JS
        + """;
      for (const box of document.querySelectorAll('.math-display, .figure-scroll')) {
        box.scrollIntoView({block: 'center'});
        await frames();
      }
    }"""
    )
    width = page.evaluate("document.documentElement.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # the page itself never scrolls sideways
    for box in page.evaluate(OVERFLOW_JS):
        assert box["right"] <= width + 0.5, box  # no box sticks out of the screen
        assert box["marked"] == box["overflowing"], box
        if box["overflowing"]:
            assert box["tabindex"] == "0" and "可左右滚动" in box["label"], box  # keyboard and screen reader
            assert box["mask"] != "none", box  # the hidden side fades out
            if box["hint"] is not None:
                assert box["hint"] == "visible", box
    # One element handle, not a locator: a locator re-resolves `.first` at every call, so a box that stopped
    # overflowing in between would silently swap in another one.
    first = page.query_selector(".math-display.is-overflowing, .figure-scroll.is-overflowing")
    if first is not None:
        first.focus()
        state = (
            "el => ({active: document.activeElement === el, left: el.scrollLeft, "
            "room: el.scrollWidth - el.clientWidth})"
        )
        before = first.evaluate(state)
        assert before["active"] and before["room"] > 1, before
        page.keyboard.press("ArrowRight")
        try:
            page.wait_for_function("el => el.scrollLeft > 0", arg=first, timeout=5000, polling=50)
        except Exception as exc:
            raise AssertionError(("ArrowRight did not scroll the focused box", before, first.evaluate(state))) from exc
        assert first.evaluate("el => el.scrollLeft") > before["left"]


GAPS_JS = """w => [...w.querySelectorAll('.widget-body .heat-table thead tr')].flatMap(tr => {
    const ths = [...tr.children].slice(1).filter(th => !th.classList.contains('heat-sum'));
    // the text itself: a header standing on end is a span (.heat-col) as wide as its line, glyphs in its middle
    const text = (th) => th.querySelector('.heat-col') || th;
    return ths.slice(1).map((th, i) => {
      const range = document.createRange(); range.selectNodeContents(text(ths[i]));
      const a = range.getBoundingClientRect(); range.selectNodeContents(text(th));
      const b = range.getBoundingClientRect();
      return { left: ths[i].textContent, right: th.textContent,
               gap: Math.max(b.left - a.right, b.top - a.bottom, a.top - b.bottom) };
    });
})"""


@pytest.mark.parametrize("slug", PAGES)
def test_no_widget_runs_its_column_headers_together_at_390px(mobile_page, slug):
    """Column headers of a heat table never touch their neighbours (no "小红因为"). (The widgets' screenshots: every
    page's, test_screenshots.py.)"""
    page = mobile_page
    page.goto(page.base + f"{slug}.html")
    page.add_style_tag(content=ALL_LAID_OUT_CSS)
    mount_all_widgets(page)
    for n, widget in enumerate(page.locator(".widget").all()):
        tight = [g for g in widget.evaluate(GAPS_JS) if g["gap"] < 3]
        assert not tight, (slug, n, tight[:3])


PUNCT_JS = """() => {
  const closing = /^[，。、；：！？）」』”’》〉】]/;
  const loose = [];
  for (const k of document.querySelectorAll('.article .katex')) {
    if (k.closest('.katex-display, .math-display')) continue;
    let next = k.nextSibling;
    if (!next && k.parentElement.classList.contains('math-nobr')) continue;
    if (next && next.nodeType === 3 && closing.test(next.textContent) && !k.closest('.math-nobr'))
      loose.push(k.textContent.slice(0, 20) + next.textContent.slice(0, 2));
  }
  const broken = [...document.querySelectorAll('.math-nobr')].filter(s => {
    const rects = [...s.getClientRects()].filter(r => r.width > 0);
    return new Set(rects.map(r => Math.round(r.top))).size > 1;
  }).map(s => s.textContent.slice(0, 20));
  return { loose, broken, glued: document.querySelectorAll('.math-nobr').length };
}"""


@pytest.mark.parametrize("slug", PAGES)
def test_closing_punctuation_never_starts_a_line_after_inline_math(mobile_page, slug):
    page = mobile_page
    page.goto(page.base + f"{slug}.html")
    found = page.evaluate(PUNCT_JS)
    assert found["loose"] == [] and found["broken"] == [], found
