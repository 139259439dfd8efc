"""End-to-end fixtures: the shared builds of the run (tests/conftest.py: the real course, built once per run for
every worker), served over http (and opened from file:// where the transport is what a test is about), driven by
Playwright in a real Chromium.

Calm by default: every page opens with the course's background-Python switch set before its scripts run
(`Course.options.noPrefetch`, theme/js/shared/course.js: no Python downloaded or booted ahead of a run), so a test's
page does not boot Pyodide beside the other test process on a 2-core machine. A test about prefetching opens its page
with `calm=False`. (`noIdleEditor` is left to the tests about the editor: it loads no Python, and it also keeps the
editor from coming for stored edits, which tests/e2e/test_cells.py checks it does.)

Every page fixture fails its test if the page logs a console error, throws, or requests anything outside the site
(any host other than our 127.0.0.1 server, or anything but file:/blob:/data: URLs).

Waits read the state the page exposes (a widget's `data-ready`, a cell's status, a quiz's `data-ready`) through
Playwright's locators and `expect`, which poll from the test's side. No wait in this file depends on the page
producing animation frames without a bound (`wait_frames` gives up after 250 ms).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import socketserver
import threading
from pathlib import Path

import pytest

from tests.conftest import ROOT, build  # noqa: F401  (build: for the tests that make a small site of their own)

ARTIFACTS = ROOT / "test-artifacts"
E2E_DIR = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    """Every test module here drives a browser and must say so (`pytestmark = pytest.mark.e2e`): `make test-fast`
    deselects by that marker, and an unmarked module would slip a browser into it."""
    unmarked = sorted(
        {
            item.module.__name__
            for item in items
            if Path(str(item.fspath)).resolve().is_relative_to(E2E_DIR) and not item.get_closest_marker("e2e")
        }
    )
    if unmarked:
        raise pytest.UsageError(f"e2e test modules without the e2e marker: {', '.join(unmarked)}")


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]
# The tests' browser only (not the benchmarks'): a key or wheel scroll lands at once instead of animating over
# frames. The tests check where a scroll lands, never how it animates.
TEST_BROWSER_ARGS = ["--disable-smooth-scrolling"]

# Set before any script of the page runs (an init script): the switches of theme/js/shared/course.js option().
CALM_OPTIONS = {"noPrefetch": True}


def options_script(options: dict) -> str:
    """An init script that sets `Course.options` (merged with any set before) before the page's own scripts run."""
    return (
        "window.Course = Object.assign(window.Course || {}, {options: Object.assign((window.Course || {}).options"
        f" || {{}}, {json.dumps(options)})}});"
    )


def chromium_executable() -> str | None:
    """CHROMIUM_PATH (set by `make test`), else a system Chromium, else None = Playwright's own browser."""
    env = os.environ.get("CHROMIUM_PATH")
    if env and env != "playwright" and os.path.exists(env):
        return env
    if env == "playwright":
        return None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
    }

    def log_message(self, *args):  # keep test output clean
        pass


class _PrefixHandler(_QuietHandler):
    """Serves the site under a sub-path (like GitHub Pages' /<repo>/); anything else is 404."""

    prefix = "/some-repo"

    def translate_path(self, path):
        if not path.startswith(self.prefix + "/"):
            return "/nonexistent-path-for-404"
        return super().translate_path(path[len(self.prefix) :])


def serve(directory: Path, handler=_QuietHandler):
    handler_cls = functools.partial(handler, directory=str(directory))
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler_cls)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server


def overlay(site: Path, dest: Path, pages: dict[str, str]) -> Path:
    """A folder that is `site` (every entry a symbolic link to the shared build) plus `pages` (name → HTML) of its own:
    a test that needs a changed page works on this, and the shared build stays as built for every other test."""
    dest.mkdir(parents=True)
    for entry in site.iterdir():
        (dest / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    for name, html in pages.items():
        target = dest / name
        if target.is_symlink():
            target.unlink()
        target.write_text(html, encoding="utf-8")
    return dest


@pytest.fixture(scope="session")
def http_base(built_site) -> str:
    server = serve(built_site)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="session")
def subpath_base(built_site) -> str:
    server = serve(built_site, _PrefixHandler)
    yield f"http://127.0.0.1:{server.server_address[1]}{_PrefixHandler.prefix}/"
    server.shutdown()


@pytest.fixture(scope="session")
def file_base(built_site) -> str:
    return built_site.as_uri() + "/"


@pytest.fixture
def base_url(http_base) -> str:
    """The shared course build over http (file:// only in the tests about the transport: test_file_journeys.py)."""
    return http_base


# For a test that measures or compares every box of a page: lay out all of them, also those the theme renders only
# near the viewport (content-visibility: auto on sections, blocks and the index's outline: theme/css/base.css).
ALL_LAID_OUT_CSS = "* { content-visibility: visible !important; }"


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    exe = chromium_executable()
    args = CHROMIUM_ARGS + TEST_BROWSER_ARGS
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=args) if exe else p.chromium.launch(args=args)
        yield browser
        browser.close()


class PageWatch:
    """Collects what a page did that a clean page must not do."""

    def __init__(self, allowed_prefixes: list[str]):
        self.allowed_prefixes = allowed_prefixes
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.external_requests: list[str] = []
        self.requests: list[str] = []
        self.expected_console: list[str] = []

    def on_request(self, request):
        url = request.url
        self.requests.append(url)
        if not any(url.startswith(p) for p in self.allowed_prefixes):
            self.external_requests.append(url)

    def on_console(self, msg):
        if msg.type == "error":
            text = msg.text
            if not any(e in text for e in self.expected_console):
                self.console_errors.append(text)

    def on_page_error(self, err):
        self.page_errors.append(str(err))

    def assert_clean(self):
        assert not self.external_requests, f"requests left the site: {self.external_requests}"
        assert not self.page_errors, f"uncaught errors: {self.page_errors}"
        assert not self.console_errors, f"console errors: {self.console_errors}"


def _open_context(browser, base: str, *, calm: bool = True, **context_options):
    """A fresh context and page on `base`, watched (PageWatch); `calm`: no background Python (CALM_OPTIONS)."""
    # Playwright's wait_for_function compiles its predicate with `new Function`, which the pages' CSP forbids;
    # test_csp.py opens its pages with the policy in force (bypass_csp=False) and checks everything still works.
    context_options.setdefault("bypass_csp", True)
    context = browser.new_context(locale="zh-CN", service_workers="block", **context_options)
    if calm:
        context.add_init_script(options_script(CALM_OPTIONS))
    watch = PageWatch([base, "blob:", "data:", "about:"] + (["file://"] if base.startswith("file:") else []))
    context.on("request", watch.on_request)
    page = context.new_page()
    page.on("console", watch.on_console)
    page.on("pageerror", watch.on_page_error)
    page.watch = watch  # type: ignore[attr-defined]
    page.base = base  # type: ignore[attr-defined]
    page.set_default_timeout(15_000)
    return context, page


def _close_and_check(context, page) -> None:
    watch = page.watch
    context.close()
    watch.assert_clean()


DESKTOP = {"viewport": {"width": 1280, "height": 800}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


@pytest.fixture
def page(browser, base_url):
    """A fresh, calm desktop page (1280×800) on the shared build over http; asserts at teardown that nothing unclean
    happened."""
    context, page = _open_context(browser, base_url, **DESKTOP)
    yield page
    _close_and_check(context, page)


@pytest.fixture
def mobile_page(browser, base_url):
    """A fresh, calm phone-sized page (390×844, touch); same checks as `page`."""
    context, page = _open_context(browser, base_url, **PHONE)
    yield page
    _close_and_check(context, page)


@pytest.fixture
def file_page(browser, file_base):
    """A fresh, calm desktop page on the shared build opened from disk (file://): for the tests about the transport."""
    context, page = _open_context(browser, file_base, **DESKTOP)
    yield page
    _close_and_check(context, page)


def artifact(name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name


FRAMES_JS = """() => new Promise((resolve) => {
  // Two animation frames (a ResizeObserver's or a media query's listeners run in a frame), bounded: after 250 ms
  // without them it resolves anyway (false), so no test ever waits on frames alone.
  let done = false;
  const end = (painted) => { if (!done) { done = true; resolve(painted); } };
  requestAnimationFrame(() => requestAnimationFrame(() => end(true)));
  setTimeout(() => end(false), 250);
})"""


def wait_frames(page) -> None:
    """Let the page lay out and paint: two frames, or 250 ms (FRAMES_JS)."""
    page.evaluate(FRAMES_JS)


def evaluate_or_stalled(page, expression: str, arg=None, seconds: float = 60):
    """`page.evaluate`. (The name is what tests/e2e/test_plots.py imports; it used to raise a re-run exception after
    `seconds`. A page that never answers is now stopped by pytest-timeout, which names the test.)"""
    return page.evaluate(expression, arg)


WIDGETS = ".widget[data-widget]"  # the author's widgets and those a cell showed at build time (.cell-widget)
# A widget kind's script loads when one of its widgets nears the view or gets the keyboard focus
# (theme/js/site/near-view.js): a focusin on each root is the explicit way to ask for all of them, without
# scrolling and without waiting for an IntersectionObserver's frame.
LOAD_ALL_WIDGETS_JS = """sel => { for (const w of document.querySelectorAll(sel))
  w.dispatchEvent(new FocusEvent('focusin', {bubbles: true})); return document.querySelectorAll(sel).length; }"""


def wait_widgets_ready(page, selector: str = WIDGETS, timeout: float = 30_000) -> int:
    """Wait until every widget matching `selector` says `data-ready="true"` (set by theme/js/widgets/index.js once
    it has drawn); returns how many there are."""
    from playwright.sync_api import expect

    widgets = page.locator(selector)
    n = widgets.count()
    for i in range(n):
        expect(widgets.nth(i)).to_have_attribute("data-ready", "true", timeout=timeout)
    return n


def mount_all_widgets(page) -> int:
    """Load every widget kind of the page and wait until each widget has drawn (`data-ready`); the page stays at the
    top. Returns the number of widgets."""
    page.evaluate(LOAD_ALL_WIDGETS_JS, WIDGETS)
    return wait_widgets_ready(page)


def read_through(page, patience_ms: int = 8000) -> None:
    """Scroll the page from top to bottom half a screen at a time, as a reader does, and back to the top: every
    section is rendered once (content-visibility: auto) and every widget's script is loaded as its widget nears the
    view (theme/js/site/lazy-widgets.js). Like a reader, it moves on once the widgets within a screen of the view
    have drawn (their `data-ready`), or after `patience_ms` for one screen (the caller's checks then name it).
    Each step is a short evaluate of its own; nothing waits on animation frames."""
    height = page.evaluate("document.documentElement.scrollHeight")
    step = max(page.evaluate("innerHeight") / 2, 200)
    settled = """() => [...document.querySelectorAll('.widget[data-widget]')].every((w) => {
      const r = w.getBoundingClientRect();
      return w.dataset.ready || r.bottom <= -innerHeight || r.top >= 2 * innerHeight;
    })"""
    y = 0
    while y < height:
        page.evaluate("y => window.scrollTo(0, y)", y)
        if y > 0:  # before the first scroll, widgets below the view wait for the reader to start
            try:  # polled on a timer (polling=50), not on frames
                page.wait_for_function(settled, polling=50, timeout=patience_ms)
            except Exception:  # noqa: BLE001 - the caller's own checks name a widget that never drew
                pass
        y += step
        height = page.evaluate("document.documentElement.scrollHeight")
    page.evaluate("window.scrollTo(0, 0)")


def exercise_solutions(site: Path, page: str) -> dict[str, str]:
    """The reference solutions of a page's exercises, as the page loads them (each exercise's data script,
    builder/exercises/render.py): {exercise id: code}."""
    import re

    from builder.bundle import browser_data_prefix

    text = (site / page).read_text("utf-8")
    out = {}
    for raw in re.findall(r'<script type="application/json" class="exercise-data">(.*?)</script>', text, re.S):
        data = json.loads(raw)
        script = (site / data["extras"]["data"]).read_text("utf-8")
        prefix = browser_data_prefix("exercises", f"d{data['extras']['key']}")
        out[data["id"]] = json.loads(script.removeprefix(prefix).rstrip().removesuffix(";"))["solution"].rstrip("\n")
    return out
