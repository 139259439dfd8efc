"""The Content-Security-Policy every page carries (builder/pages.py): an external image slipped into a built page
is blocked — no request leaves the site — while every widget and every code cell still works, over http and
file://. The pages are opened with the policy in force (the other e2e tests bypass it for wait_for_function)."""

from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import _close_and_check, _open_context

pytestmark = pytest.mark.e2e

EVIL = "https://evil.example/pixel.png"
PAGES = ["module-05-attention.html", "attention-explained.html", "activation-function-explained.html"]


@pytest.fixture(scope="module")
def injected(built_site):
    """Copies of the built pages with an external image (and one in CSS) injected, beside the originals."""
    names = []
    for name in PAGES:
        html = (built_site / name).read_text(encoding="utf-8")
        assert 'http-equiv="Content-Security-Policy"' in html
        html = html.replace(
            "<main",
            f'<img id="evil" src="{EVIL}" alt=""><div id="evil-css" '
            f'style="background:url({EVIL}?css);width:9px;height:9px"></div><main',
            1,
        )
        (built_site / f"csp-{name}").write_text(html, encoding="utf-8")
        names.append(f"csp-{name}")
    yield names
    for name in names:  # the site is shared by this worker's other tests (search, publish): leave it as built
        (built_site / name).unlink()


def poll(page, expression: str, timeout: float = 120.0) -> None:
    """wait_for_function without `new Function` (the policy forbids eval): poll page.evaluate."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        time.sleep(0.2)


@pytest.mark.parametrize("transport", ["http", "file"])
def test_external_image_is_blocked_and_widgets_and_cells_still_work(browser, http_base, file_base, injected, transport):
    base = http_base if transport == "http" else file_base
    context, page = _open_context(browser, base, viewport={"width": 1280, "height": 900}, bypass_csp=False)
    page.watch.expected_console.append("Content Security Policy")  # the blocked image is reported, as it should
    page.add_init_script(
        "window.__violations = []; document.addEventListener('securitypolicyviolation', "
        "e => window.__violations.push([e.violatedDirective, e.blockedURI]));"
    )
    failed: list[tuple[str, str]] = []
    page.context.on("requestfailed", lambda r: failed.append((r.url, r.failure or "")))
    try:
        for name in injected:
            page.goto(base + name)
            widgets = page.locator(".widget")
            assert widgets.count() > 0
            for widget in widgets.all():  # lazy widget kinds mount when they near the viewport
                widget.scroll_into_view_if_needed()
            poll(page, "[...document.querySelectorAll('.widget')].every(w => w.dataset.ready === 'true')")
            poll(page, "window.__violations.length >= 2", timeout=10)
            violations = page.evaluate("window.__violations")
            assert sorted(v[0] for v in violations) == ["img-src", "img-src"], violations
            assert all(v[1].startswith(EVIL) for v in violations)
            assert page.evaluate("document.getElementById('evil').naturalWidth") == 0
            # a widget still reacts: the first one's live view has content the script drew
            assert page.evaluate("document.querySelector('.widget .widget-body').children.length") > 0
        page.goto(base + injected[0])
        page.click(".cells-run-all")
        poll(
            page, "/全部运行完成|中断|错误/.test(document.querySelector('.cells-bar-status').textContent)", timeout=180
        )
        errors = page.evaluate(
            "[...document.querySelectorAll('.cell-error, .cell-output')].map(e => e.textContent)"
            ".filter(t => /Error|错误/.test(t))"
        )
        assert page.text_content(".cells-bar-status") == "全部运行完成。", errors
        assert page.evaluate(
            "[...document.querySelectorAll('.cell-output')].every(o => o.dataset.origin === 'browser')"
        )
        # Chromium reports the attempt, then fails it before it reaches the network
        attempted = {url for url in page.watch.external_requests}
        assert attempted == {EVIL, EVIL + "?css"}
        assert all("csp" in dict(failed).get(url, "").lower() for url in attempted), failed
        page.watch.external_requests.clear()
    finally:
        _close_and_check(context, page)
