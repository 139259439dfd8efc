"""The site ships KaTeX's stylesheet pruned to what its formulas use (builder/math.py: prune_katex_css). In a real
browser, every element of every formula must get exactly the computed style it gets from KaTeX's full
stylesheet."""
from __future__ import annotations

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.e2e

FULL_CSS = (ROOT / "node_modules" / "katex" / "dist" / "katex.min.css").read_text(encoding="utf-8")

# Resolved values (width, height, …) depend on layout, so both snapshots are taken with the fonts loaded.
COMPUTED = """async () => { await document.fonts.ready; return Array.from(document.querySelectorAll('.katex, .katex *'), (el) => {
  const cs = getComputedStyle(el);
  const out = [];
  for (let i = 0; i < cs.length; i++) out.push(cs[i] + ':' + cs.getPropertyValue(cs[i]));
  for (const pseudo of ['::before', '::after']) out.push(pseudo + getComputedStyle(el, pseudo).content);
  return out.join(';');
}); }"""

SWAP_TO_FULL = """(css) => {
  const link = document.querySelector('link[href*="katex.min.css"]');
  const style = document.createElement('style');
  style.textContent = css.replaceAll('url(fonts/', 'url(assets/katex/fonts/');
  link.replaceWith(style);
}"""


@pytest.mark.parametrize("slug", ["module-05-attention", "attention-explained"])
def test_pruned_katex_css_styles_every_formula_element_like_the_full_stylesheet(page, slug):
    page.goto(page.base + f"{slug}.html")
    shipped = page.evaluate(COMPUTED)
    assert len(shipped) > 500  # formulas are there (module 05 has thousands of KaTeX elements)
    page.evaluate(SWAP_TO_FULL, FULL_CSS)
    full = page.evaluate(COMPUTED)
    assert len(full) == len(shipped)
    differing = [i for i, (a, b) in enumerate(zip(shipped, full)) if a != b]
    assert not differing, f"{len(differing)} elements styled differently, e.g. {set(shipped[differing[0]].split(';')) ^ set(full[differing[0]].split(';'))}"
