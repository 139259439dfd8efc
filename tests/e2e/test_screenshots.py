"""Every page of the real course at 1280 and 390 px, every section laid out and every widget drawn: no page scrolls
sideways. With COURSE_SCREENSHOTS=1 (`make screenshots`), the same walk also writes each page whole, light and dark,
into test-artifacts/ (`<page>-<width>-<scheme>.png`) for people to look at; `make test` leaves that out (it doubled
these tests' time and asserts nothing)."""

from __future__ import annotations

import os

import pytest

from tests.e2e.conftest import (
    ALL_LAID_OUT_CSS,
    DESKTOP,
    PHONE,
    _close_and_check,
    _open_context,
    artifact,
    mount_all_widgets,
)

pytestmark = pytest.mark.e2e

SCREENSHOTS = os.environ.get("COURSE_SCREENSHOTS") == "1"


@pytest.mark.parametrize("width", [1280, 390])
def test_no_page_scrolls_sideways_at_1280_and_390_px(browser, http_base, built_site, width):
    pages = sorted(p.name for p in built_site.glob("*.html"))
    assert "index.html" in pages and len(pages) >= 3
    overflowing = []
    device = DESKTOP if width == 1280 else PHONE
    for scheme in ("light", "dark") if SCREENSHOTS else ("light",):
        context, page = _open_context(browser, http_base, color_scheme=scheme, **device)
        try:
            for name in pages:
                page.goto(http_base + name)
                page.add_style_tag(content=ALL_LAID_OUT_CSS)
                mount_all_widgets(page)
                page.evaluate("document.fonts.ready.then(() => true)")
                # against the width asked for: a phone's layout viewport widens to content that is too wide, so
                # innerWidth would grow with the overflow and hide it
                overflow = page.evaluate("document.documentElement.scrollWidth") - width
                if overflow > 0:
                    overflowing.append(f"{name} ({scheme}): {overflow} px")
                if SCREENSHOTS:
                    page.screenshot(path=artifact(f"{name[:-5]}-{width}-{scheme}.png"), full_page=True)
        finally:
            _close_and_check(context, page)
    assert not overflowing, f"sideways scrolling at {width} px: {overflowing}"
