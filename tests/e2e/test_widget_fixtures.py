"""Every widget folder of both courses, through its fixture.md (tests/widget_fixtures.py), in Chromium: the fixture
site's page of that folder (built once per run: tests/conftest.py SHARED_BUILDS) is opened, each of its widgets is
brought into view as a reader scrolls to it, its kind's script loads and mounts it, and it says `data-ready="true"`;
the page logs no console error, throws nothing and loads nothing from outside (the `page` checks). A new folder with
its fixture is in this test without being named anywhere."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.conftest import CONTENT, MINIMAL
from tests.e2e.conftest import DESKTOP, _close_and_check, _open_context, serve
from tests.widget_fixtures import page_name, widget_folders

pytestmark = pytest.mark.e2e

CASES = [
    pytest.param(content_dir, kind, folder, id=f"{course}/{folder.name}")
    for course, content_dir in (("minimal", MINIMAL), ("attention", CONTENT))
    for kind, folder in widget_folders(content_dir)
]


@pytest.fixture(scope="module")
def fixture_bases(minimal_widget_site, course_widget_site):
    """The two fixture sites over http, by the course's content folder."""
    servers = {MINIMAL: serve(minimal_widget_site), CONTENT: serve(course_widget_site)}
    yield {content: f"http://127.0.0.1:{server.server_address[1]}/" for content, server in servers.items()}
    for server in servers.values():
        server.shutdown()


@pytest.mark.parametrize("content_dir,kind,folder", CASES)
def test_every_widget_of_the_fixture_mounts_and_says_ready(browser, fixture_bases, content_dir, kind, folder):
    assert (folder / "fixture.md").is_file(), f"{folder}: no fixture.md"
    base = fixture_bases[content_dir]
    context, page = _open_context(browser, base, **DESKTOP)
    try:
        page.goto(base + f"{page_name(folder)}.html")
        widgets = page.locator(f'.widget[data-widget="{kind}"]')
        assert widgets.count() >= 1
        for i in range(widgets.count()):
            widgets.nth(i).evaluate("w => w.scrollIntoView({block: 'center'})")
            expect(widgets.nth(i)).to_have_attribute("data-ready", "true", timeout=30_000)
    finally:
        _close_and_check(context, page)
