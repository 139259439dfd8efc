"""The site ships KaTeX's stylesheet pruned to what its formulas use (builder/katex/css.py: prune_katex_css), and its
most frequent inline styles as shared classes (builder/katex/compact.py: STYLE_CLASSES). In a real browser, every
element of every formula must get exactly the computed style it gets from KaTeX's full stylesheet and KaTeX's own
inline styles."""

from __future__ import annotations

import pytest

from builder.katex.compact import STYLE_CLASSES
from tests.conftest import ROOT
from tests.e2e.conftest import ALL_LAID_OUT_CSS, mount_all_widgets

pytestmark = pytest.mark.e2e

FULL_CSS = (ROOT / "node_modules" / "katex" / "dist" / "katex.min.css").read_text(encoding="utf-8")

# Resolved values (width, height, …) depend on layout, so both snapshots are taken with the fonts loaded.
COMPUTED = """async () => { await document.fonts.ready;
return Array.from(document.querySelectorAll('.katex, .katex *'), (el) => {
  const cs = getComputedStyle(el);
  const out = [];
  for (let i = 0; i < cs.length; i++) out.push(cs[i] + ':' + cs.getPropertyValue(cs[i]));
  for (const pseudo of ['::before', '::after']) out.push(pseudo + getComputedStyle(el, pseudo).content);
  return out.join(';');
}); }"""

# KaTeX's full stylesheet instead of the shipped one, and each shared class back as the inline style it replaced.
SWAP_TO_FULL = """([css, styles]) => {
  const link = document.querySelector('link[href*="katex.min.css"]');
  const style = document.createElement('style');
  style.textContent = css.replaceAll('url(fonts/', 'url(assets/katex/fonts/');
  link.replaceWith(style);
  let swapped = 0;
  for (const el of document.querySelectorAll('.katex *')) {
    const shared = [...el.classList].find((c) => /^k[0-9]+$/.test(c));
    if (!shared) continue;
    el.classList.remove(shared);
    el.setAttribute('style', styles[Number(shared.slice(1))]);
    swapped++;
  }
  return swapped;
}"""


@pytest.mark.parametrize("slug", ["module-05-attention", "attention-explained"])
def test_pruned_katex_css_styles_every_formula_element_like_the_full_stylesheet(page, slug):
    page.goto(page.base + f"{slug}.html")
    # every formula laid out in both snapshots: a section not yet rendered (content-visibility: auto) has no
    # resolved sizes, and whether it is rendered may change between the snapshots
    page.add_style_tag(content=ALL_LAID_OUT_CSS)
    shipped = page.evaluate(COMPUTED)
    assert len(shipped) > 500  # formulas are there (module 05 has thousands of KaTeX elements)
    assert page.evaluate(SWAP_TO_FULL, [FULL_CSS, list(STYLE_CLASSES)]) > 100  # the shared classes are in use
    full = page.evaluate(COMPUTED)
    assert len(full) == len(shipped)
    differing = [i for i, (a, b) in enumerate(zip(shipped, full)) if a != b]
    if differing:
        first = set(shipped[differing[0]].split(";")) ^ set(full[differing[0]].split(";"))
        raise AssertionError(f"{len(differing)} elements styled differently, e.g. {first}")


FONTS = ROOT / "node_modules" / "katex" / "dist" / "fonts"


def test_subset_fonts_draw_every_formula_pixel_for_pixel_like_katex_fonts(browser, http_base):
    """The site's KaTeX fonts are subsets (builder/katex/subset.py: subset_font); the same page drawn with KaTeX's own
    font files (served in their place) must give the very same pixels, at desktop and phone widths."""
    shots = []
    for original in (False, True):
        context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900}, device_scale_factor=1)
        if original:
            context.route(
                "**/assets/katex/fonts/*.woff2",
                lambda route: route.fulfill(
                    body=(FONTS / route.request.url.split("?")[0].rsplit("/", 1)[1]).read_bytes(),
                    content_type="font/woff2",
                ),
            )
        page = context.new_page()
        page.goto(http_base + "module-05-attention.html")
        # every section laid out from the start: one rendered only as the capture scrolls to it (content-visibility:
        # auto) asks for its fonts then, and could be captured before they are in
        page.add_style_tag(content=ALL_LAID_OUT_CSS)
        page.evaluate("document.fonts.ready")
        # every widget mounted first, so no formula moves while it is captured
        mount_all_widgets(page)
        formulas = page.locator(".math-display")
        assert formulas.count() >= 5
        shots.append(
            [formulas.nth(i).screenshot(animations="disabled") for i in range(formulas.count())]
            + [page.locator(".article p:has(.katex)").first.screenshot(animations="disabled")]
        )
        context.close()
    assert shots[0] == shots[1]
