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

# One element per kind: the same tag, classes, inline style and first/last-child place for it and each of its
# ancestors up to its formula's root. Stylesheet rules (KaTeX's select by class, tag, ::before/::after and
# :first-child/:last-child) match all elements of a kind alike, so one stands for all of them: module 05 has tens of
# thousands of formula elements, of ~1,500 kinds. Chosen before the swap below changes classes and styles.
CHOOSE_ONE_OF_EACH_KIND = """() => {
  const kind = (el) => {
    const parts = [];
    for (let e = el; e; e = e.parentElement) {
      parts.push([e.tagName, e.getAttribute('class'), e.getAttribute('style'), !e.previousElementSibling,
        !e.nextElementSibling].join('|'));
      if (e.classList.contains('katex')) break;
    }
    return parts.join('>');
  };
  const chosen = new Map();
  const all = document.querySelectorAll('.katex, .katex *');
  for (const el of all) if (!chosen.has(kind(el))) chosen.set(kind(el), el);
  window.__kinds = [...chosen.values()];
  return [all.length, window.__kinds.length];
}"""

# Resolved values (width, height, …) depend on layout, so both snapshots are taken with the fonts loaded. Each
# snapshot stays in the page (window[name]), compared there: megabytes of styles need not be copied out.
COMPUTED = """async (name) => { await document.fonts.ready;
window[name] = window.__kinds.map((el) => {
  const cs = getComputedStyle(el);
  const out = [];
  for (let i = 0; i < cs.length; i++) out.push(cs[i] + ':' + cs.getPropertyValue(cs[i]));
  for (const pseudo of ['::before', '::after']) out.push(pseudo + getComputedStyle(el, pseudo).content);
  return out.join(';');
});
return window[name].length; }"""

# How many elements the two snapshots style differently, and the first difference (properties in one, not the other).
DIFFERENCE = """() => {
  const [a, b] = [window.__shipped, window.__full];
  const differing = a.map((s, i) => i).filter((i) => a[i] !== b[i]);
  if (!differing.length) return [0, []];
  const [x, y] = [new Set(a[differing[0]].split(';')), new Set(b[differing[0]].split(';'))];
  return [differing.length, [...x].filter((p) => !y.has(p)).concat([...y].filter((p) => !x.has(p)))];
}"""

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
    elements, kinds = page.evaluate(CHOOSE_ONE_OF_EACH_KIND)
    assert elements > 500 and kinds > 100, (elements, kinds)  # formulas are there, of many kinds
    shipped = page.evaluate(COMPUTED, "__shipped")
    assert page.evaluate(SWAP_TO_FULL, [FULL_CSS, list(STYLE_CLASSES)]) > 100  # the shared classes are in use
    assert page.evaluate(COMPUTED, "__full") == shipped
    differing, first = page.evaluate(DIFFERENCE)
    assert differing == 0, f"{differing} elements styled differently, e.g. {first}"


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
