"""404.html as GitHub Pages serves it: for any missing URL of the site, at any depth under /<repo>/, with status
404. Its links (the index, every page) and its search must lead into the site from wherever it is shown."""

from __future__ import annotations

import http.server
from pathlib import Path

import pytest

from tests.e2e.conftest import serve

pytestmark = pytest.mark.e2e
PREFIX = "/some-repo"


class _PagesHandler(http.server.SimpleHTTPRequestHandler):
    """The site under /some-repo/; a missing file anywhere gets 404.html with status 404 (as GitHub Pages does)."""

    def log_message(self, *args):
        pass

    def send_head(self):
        path = self.path.split("?")[0]
        local = Path(self.directory) / path[len(PREFIX) + 1 :] if path.startswith(PREFIX + "/") else None
        if local is not None and (local.is_file() or (local.is_dir() and (local / "index.html").is_file())):
            self.path = self.path[len(PREFIX) :]
            return super().send_head()
        body = (Path(self.directory) / "404.html").read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body) if self.command != "HEAD" else None
        return None


@pytest.fixture(scope="module")
def pages_base(built_site):
    server = serve(built_site, _PagesHandler)
    yield f"http://127.0.0.1:{server.server_address[1]}{PREFIX}/"
    server.shutdown()


@pytest.mark.parametrize("missing", ["nope.html", "a/b/c/deep-page.html", "module-05-attention.html/extra"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_missing_url_at_any_depth_offers_the_index_every_page_and_search(browser, pages_base, missing, scheme):
    context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme=scheme, bypass_csp=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    response = page.goto(pages_base + missing)
    assert response.status == 404
    assert page.locator("h1").inner_text() == "找不到这个页面"
    page.wait_for_function("document.documentElement.dataset.siteRoot !== undefined")
    home = page.get_by_role("link", name="← 回到课程首页")
    assert home.evaluate("a => a.href") == pages_base + "index.html"
    for link in page.locator("main li a").all():
        assert link.evaluate("a => a.href").startswith(pages_base)
    page.get_by_label("在课程中搜索").fill("softmax")
    page.get_by_role("button", name="搜索").click()
    page.wait_for_url(pages_base + "index.html?q=softmax")
    page.locator(".search-dialog[open] .search-results li").first.wait_for()
    home_response = page.goto(pages_base + missing)
    page.wait_for_function("document.documentElement.dataset.siteRoot !== undefined")
    page.get_by_role("link", name="← 回到课程首页").click()
    page.wait_for_url(pages_base + "index.html")
    assert page.locator(".card").count() >= 2
    assert home_response.status == 404 and errors == []
    context.close()


@pytest.mark.parametrize("transport", ["http", "file"])  # from disk too: the page finds the site root itself
def test_opened_from_the_site_folder_the_links_work_as_they_are(request, transport):
    page = request.getfixturevalue("page" if transport == "http" else "file_page")
    page.goto(page.base + "404.html")
    page.get_by_role("link", name="← 回到课程首页").click()
    page.wait_for_url("**/index.html")
