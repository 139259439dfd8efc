"""The Content-Security-Policy every page carries (builder/pages.py): an external image slipped into a built page
is blocked — no request leaves the site — while every widget and every code cell still works, over http and
file:// (the policy's 'self' means another thing on each: the transport is part of what is tested). The pages are
opened with the policy in force (the other e2e tests bypass it for wait_for_function)."""

from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import LOAD_ALL_WIDGETS_JS, WIDGETS, _close_and_check, _open_context, overlay, serve

pytestmark = pytest.mark.e2e

EVIL = "https://evil.example/pixel.png"
PAGES = ["module-05-attention.html", "attention-explained.html", "activation-function-explained.html"]


@pytest.fixture(scope="module")
def injected(built_site, tmp_path_factory):
    """The shared build with copies of three pages that carry an external image (and one in CSS), beside the
    originals, in a folder of this module's own (`overlay`: the shared build itself stays as built): its http and
    file:// base URLs and the injected pages' names."""
    pages = {}
    for name in PAGES:
        html = (built_site / name).read_text(encoding="utf-8")
        assert 'http-equiv="Content-Security-Policy"' in html
        pages[f"csp-{name}"] = html.replace(
            "<main",
            f'<img id="evil" src="{EVIL}" alt=""><div id="evil-css" '
            f'style="background:url({EVIL}?css);width:9px;height:9px"></div><main',
            1,
        )
    site = overlay(built_site, tmp_path_factory.mktemp("csp") / "site", pages)
    server = serve(site)
    yield {"http": f"http://127.0.0.1:{server.server_address[1]}/", "file": site.as_uri() + "/", "pages": list(pages)}
    server.shutdown()


def poll(page, expression: str, timeout: float) -> None:
    """wait_for_function without `new Function` (the policy forbids eval): poll page.evaluate."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        time.sleep(0.2)


@pytest.mark.parametrize("transport", ["http", "file"])
def test_external_image_is_blocked_and_widgets_and_cells_still_work(browser, injected, transport):
    base = injected[transport]
    context, page = _open_context(browser, base, viewport={"width": 1280, "height": 900}, bypass_csp=False)
    page.watch.expected_console.append("Content Security Policy")  # the blocked image is reported, as it should
    page.add_init_script(
        "window.__violations = []; document.addEventListener('securitypolicyviolation', "
        "e => window.__violations.push([e.violatedDirective, e.blockedURI]));"
    )
    failed: list[tuple[str, str]] = []
    page.context.on("requestfailed", lambda r: failed.append((r.url, r.failure or "")))
    try:
        for name in injected["pages"]:
            page.goto(base + name)
            widgets = page.locator(".widget")
            assert widgets.count() > 0
            page.evaluate(LOAD_ALL_WIDGETS_JS, WIDGETS)  # every widget kind's script, now (the focus path)
            poll(page, "[...document.querySelectorAll('.widget')].every(w => w.dataset.ready === 'true')", 30)
            poll(page, "window.__violations.length >= 2", 10)
            violations = page.evaluate("window.__violations")
            assert sorted(v[0] for v in violations) == ["img-src", "img-src"], violations
            assert all(v[1].startswith(EVIL) for v in violations)
            assert page.evaluate("document.getElementById('evil').naturalWidth") == 0
            # a widget still reacts: the first one's live view has content the script drew
            assert page.evaluate("document.querySelector('.widget .widget-body').children.length") > 0
        page.goto(base + injected["pages"][0])
        page.click(".cells-run-all")
        poll(page, "/全部运行完成|中断|错误/.test(document.querySelector('.cells-bar-status').textContent)", 90)
        errors = page.evaluate(
            "[...document.querySelectorAll('.cell-error, .cell-output')].map(e => e.textContent)"
            ".filter(t => /Error|错误/.test(t))"
        )
        assert page.text_content(".cells-bar-status") == "全部运行完成。", errors
        assert page.evaluate(
            "[...document.querySelectorAll('.code-cell:not([data-exercise]) .cell-output')]"
            ".every(o => o.dataset.origin === 'browser')"
        )
        # Chromium reports the attempt, then fails it before it reaches the network
        attempted = {url for url in page.watch.external_requests}
        assert attempted == {EVIL, EVIL + "?css"}
        assert all("csp" in dict(failed).get(url, "").lower() for url in attempted), failed
        page.watch.external_requests.clear()
    finally:
        _close_and_check(context, page)
