"""Screenshots for people to look at: every page of the real course at 1280 and 390 px, light and dark, whole page,
every section laid out and every widget drawn, into test-artifacts/ (`<page>-<width>-<scheme>.png`). On the way it
checks the one thing a screenshot would show at a glance: no page scrolls sideways at either width."""

from __future__ import annotations

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


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_at_1280_and_390_px_light_and_dark(browser, http_base, built_site, width, scheme):
    pages = sorted(p.name for p in built_site.glob("*.html"))
    assert "index.html" in pages and len(pages) >= 3
    overflowing = []
    device = DESKTOP if width == 1280 else PHONE
    context, page = _open_context(browser, http_base, color_scheme=scheme, **device)
    try:
        for name in pages:
            page.goto(http_base + name)
            page.add_style_tag(content=ALL_LAID_OUT_CSS)
            mount_all_widgets(page)
            page.evaluate("document.fonts.ready.then(() => true)")
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            if overflow > 0:
                overflowing.append(f"{name}: {overflow} px")
            page.screenshot(path=artifact(f"{name[:-5]}-{width}-{scheme}.png"), full_page=True)
    finally:
        _close_and_check(context, page)
    assert not overflowing, f"sideways scrolling at {width} px: {overflowing}"
