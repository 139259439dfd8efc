"""Glossary in the browser: the first use of a term shows its definition on keyboard focus (and hides on
Escape), and the search finds 遮罩 when the reader types 掩码."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e


def test_first_use_tooltip_by_keyboard_and_search_by_synonym(page):
    page.goto(page.base + "module-05-attention.html")
    terms = page.locator(".article .gloss")
    assert terms.count() >= 2
    # one tooltip per term per page (the term's own text: innerText is empty in sections not rendered yet)
    words = terms.evaluate_all("els => els.map((e) => e.firstChild.textContent)")
    assert all(words) and len(set(words)) == terms.count()
    term = terms.first
    tip = term.locator(".gloss-tip")
    assert not tip.is_visible()
    term.focus()
    assert tip.is_visible() and tip.get_attribute("role") == "tooltip"
    assert term.get_attribute("aria-describedby") == tip.get_attribute("id")
    page.keyboard.press("Escape")
    assert not tip.is_visible()
    page.keyboard.press("Control+k")
    page.locator(".search-input").fill("掩码")
    page.locator(".search-results li").first.wait_for()
    assert "遮罩" in page.locator(".search-results").inner_text()
