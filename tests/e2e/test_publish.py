"""Publishing, end to end in Chromium: the offline zip opened from disk, the site under a GitHub Pages
sub-path, and the authoring server's error overlay."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from builder.model import BuildOptions
from builder.serve import DevServer
from builder.zipsite import ZIP_NAME, zip_site
from tests.conftest import ROOT
from tests.e2e.conftest import _close_and_check, _open_context

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("publish")]
RUNTIME_TIMEOUT = 120_000  # Pyodide start-up from file:// on a slow CI machine


@pytest.fixture(scope="module")
def unzipped(built_site, tmp_path_factory) -> Path:
    """The real course's offline zip, unzipped into an unrelated folder."""
    where = tmp_path_factory.mktemp("offline")
    archive = zip_site(built_site, where / f"{ZIP_NAME}.zip")
    dest = where / "用户的下载文件夹"
    with zipfile.ZipFile(archive) as z:
        z.extractall(dest)
    return dest / ZIP_NAME


def test_offline_zip_works_from_disk(browser, unzipped):
    base = unzipped.as_uri() + "/"
    context, page = _open_context(browser, base, viewport={"width": 1280, "height": 800})
    try:
        page.goto(base + "index.html")
        page.locator('a[href="module-05-attention.html"]').first.click()
        page.wait_for_url(re.compile(r"module-05-attention\.html"))
        assert page.locator(".katex").count() > 10  # math is pre-rendered
        page.locator("[data-widget]").first.scroll_into_view_if_needed()  # widgets mount near the viewport
        page.wait_for_selector('[data-widget][data-ready="true"]')

        cell = page.locator(".code-cell").filter(has=page.locator(".cell-run")).first
        run = cell.locator(".cell-run")
        run.scroll_into_view_if_needed()
        run.click()  # the first click also starts the Python runtime (file:// path)
        output = cell.locator('.cell-output[data-origin="browser"] .cell-log')
        page.wait_for_function(
            """(el) => el && el.textContent.trim().length > 0 && !el.querySelector('.cell-error')""",
            arg=output.element_handle(timeout=RUNTIME_TIMEOUT),
            timeout=RUNTIME_TIMEOUT,
        )
        page.wait_for_function("(b) => !b.disabled", arg=run.element_handle(), timeout=RUNTIME_TIMEOUT)

        page.locator('a[href^="attention-explained.html"]').first.click()
        page.wait_for_url(re.compile(r"attention-explained\.html"))
        page.locator("[data-widget]").first.scroll_into_view_if_needed()
        widget = page.locator('[data-widget][data-ready="true"]').first
        widget.wait_for()
        buttons = widget.locator("button:visible")
        assert buttons.count() > 1
        before = widget.inner_text()
        buttons.nth(buttons.count() - 1).scroll_into_view_if_needed()
        buttons.nth(buttons.count() - 1).press("Enter")  # keyboard use of the widget
        page.wait_for_function("([el, text]) => el.innerText !== text", arg=[widget.element_handle(), before])
    finally:
        _close_and_check(context, page)


def test_site_works_under_a_github_pages_sub_path(browser, subpath_base, built_site):
    context, page = _open_context(browser, subpath_base, viewport={"width": 1280, "height": 800})
    failed: list[str] = []
    ok: list[str] = []
    page.on("response", lambda r: (failed if r.status >= 400 else ok).append(f"{r.status} {r.url}"))
    try:
        pages = sorted(p.name for p in built_site.glob("*.html"))
        assert "index.html" in pages and len(pages) >= 3
        for name in pages:
            page.goto(subpath_base + name)
            assert page.locator("h1").count() >= 1, name
            page.evaluate("document.fonts.ready.then(() => document.fonts.size)")  # KaTeX fonts fetched
        assert any("/some-repo/assets/katex/katex.min.css" in u for u in ok)
        assert any(u.endswith(".woff2") and "/some-repo/assets/katex/fonts/" in u for u in ok)

        page.goto(subpath_base + "index.html")
        page.locator('a[href="module-05-attention.html"]').first.click()
        page.wait_for_url(subpath_base + "module-05-attention.html")
        page.locator("[data-widget]").first.scroll_into_view_if_needed()
        page.wait_for_selector('[data-widget][data-ready="true"]')
        assert page.evaluate("document.fonts.check('16px KaTeX_Main')")
        assert not failed, failed
    finally:
        _close_and_check(context, page)


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve")
    content = root / "content"
    content.mkdir()
    (content / "site.yml").write_text("series: 测试\ntitle: 测试课程\nplanned: []\n", encoding="utf-8")
    (content / "index.md").write_text("---\ntitle: 首页\nkind: index\n---\n欢迎。\n", encoding="utf-8")
    (content / "a.md").write_text("---\ntitle: 页面 A\n---\n## 第一节\n\n原来的文字 $QK^\\top$。\n", encoding="utf-8")
    options = BuildOptions(
        root=ROOT,
        content_dir=content,
        theme_dir=ROOT / "theme",
        out_dir=root / "site",
        cache_dir=root / "cache",
        python_runtime=False,
        jobs=1,
    )
    server = DevServer(options, port=0, log=lambda text: None, watch_paths=[content]).start()
    server.content = content  # type: ignore[attr-defined]
    yield server
    server.stop()


@pytest.mark.parametrize("scheme,width", [("light", 1280), ("dark", 390)])
def test_authoring_server_overlay_shows_problems_and_clears_on_fix(browser, dev_server, scheme, width):
    page_md = dev_server.content / "a.md"
    good = page_md.read_text(encoding="utf-8")
    context, page = _open_context(
        browser, dev_server.url, viewport={"width": width, "height": 800}, color_scheme=scheme
    )
    try:
        page.goto(dev_server.url + "a.html")
        page.wait_for_selector('html[data-live-reload="connected"]', state="attached")
        page.evaluate("window.__marker = 1")  # gone after a reload
        page_md.write_text(
            good.replace("原来的文字 $QK^\\top$。", "坏了 $\\frac{a$ <img src=x onerror=alert(1)>"), encoding="utf-8"
        )
        overlay = page.locator("#live-build-problems")
        overlay.wait_for()
        text = overlay.inner_text()
        assert "构建失败" in text and re.search(r"a\.md:6: .*\\frac\{a", text), text
        assert overlay.locator("img").count() == 0  # problems are shown as text
        assert page.evaluate("window.__marker") == 1  # the old page stays, with the overlay on top

        page_md.write_text(good.replace("原来的文字", "修好了"), encoding="utf-8")
        page.wait_for_function("() => window.__marker === undefined && document.body.textContent.includes('修好了')")
        assert page.locator("#live-build-problems").count() == 0
    finally:
        page_md.write_text(good, encoding="utf-8")
        page.watch.expected_console.append("EventSource")  # a reload may cut the event stream mid-flight
        _close_and_check(context, page)
