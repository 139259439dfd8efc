"""End-to-end fixtures: the real site, built once per test process, served over http and file://,
driven by Playwright in a real Chromium.

Every `page` fixture fails its test if the page logs a console error, throws, or requests anything
outside the site (any host other than our 127.0.0.1 server, or anything but file:/blob:/data: URLs).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import signal
import socketserver
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, build

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
# frames, which a loaded headless Chromium may stop producing (ArrowRight on a focused wide formula had not moved it
# after 5 s at load 7). The tests check where a scroll lands, never how it animates.
TEST_BROWSER_ARGS = ["--disable-smooth-scrolling"]


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


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The real course (content/), built with the Python runtime, into a private folder."""
    out = tmp_path_factory.mktemp("built") / "site"
    build(ROOT / "content", out, python_runtime=True)
    return out


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


@pytest.fixture(params=["http", "file"])
def base_url(request, http_base, file_base) -> str:
    """Each test using this runs twice: over http://127.0.0.1 and over file://."""
    return http_base if request.param == "http" else file_base


# Playwright's wait_for_function re-checks its predicate on requestAnimationFrame unless told otherwise. A headless
# Chromium under load sometimes stops producing frames for a while, and then a predicate that is already true is
# never looked at again: CI once waited 300 s for "全部运行完成" after a page's cells had run. Polling on a timer
# keeps checking without frames; 100 ms is quicker than a test needs to notice. (A test may still pass polling=.)
WAIT_POLLING_MS = 100


def _poll_on_a_timer(wait_for_function):
    @functools.wraps(wait_for_function)
    def wrapper(self, expression, *, polling=None, **kwargs):
        return wait_for_function(self, expression, polling=WAIT_POLLING_MS if polling is None else polling, **kwargs)

    return wrapper


def _install_timer_polling() -> None:
    from playwright.sync_api import Frame, Page

    for cls in (Page, Frame):
        if not getattr(cls.wait_for_function, "_polls_on_timer", False):
            cls.wait_for_function = _poll_on_a_timer(cls.wait_for_function)
            cls.wait_for_function._polls_on_timer = True


_install_timer_polling()


# For a test that measures or compares every box of a page: lay out all of them, also those the theme renders only
# near the viewport (content-visibility: auto on sections, blocks and the index's outline: theme/css/base.css).
ALL_LAID_OUT_CSS = "* { content-visibility: visible !important; }"


class ProbeTimedOut(Exception):
    """A call into the browser outside any test's time limit took too long (see `bounded`)."""


@contextlib.contextmanager
def bounded(seconds: float):
    """Raise ProbeTimedOut in the main thread if the block takes longer than `seconds`: for the calls the report hook
    makes after a test failed, where no time limit applies (pytest-timeout's has ended) and `page.evaluate` has
    none of its own.  (The sync Playwright API waits in the main thread, where the signal arrives.)  pytest-timeout's
    own SIGALRM handler and timer are put back afterwards."""

    def expired(signum, frame):
        raise ProbeTimedOut(f"no answer from the browser in {seconds:g} s")

    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, expired)
    left, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if left:
            signal.setitimer(signal.ITIMER_REAL, max(left - (time.monotonic() - started), 0.001))


class HeadlessFramesStopped(Exception):
    """The page stopped producing animation frames (a headless Chromium stall seen under load): IntersectionObserver,
    requestAnimationFrame and Playwright's own "stable" checks all wait on frames, so the test cannot go on. The
    only failure `make test` re-runs (once, in a fresh page: `--only-rerun HeadlessFramesStopped`)."""


class BrowserHolder:
    """The test process's Chromium, used like a Playwright Browser (`browser.new_context(…)`): it knows the contexts
    it opened, so that a failed test can ask whether its pages still paint, and it is relaunched when it has stopped
    painting altogether (see HeadlessFramesStopped)."""

    def __init__(self, playwright):
        self._playwright = playwright
        self._browser = None
        self._contexts: list = []
        self.launch()

    def launch(self) -> None:
        if self._browser is not None:
            try:
                self._browser.close()
            except Exception:  # a wedged browser may not answer: a new one is launched all the same
                pass
        self._contexts = []
        exe = chromium_executable()
        args = CHROMIUM_ARGS + TEST_BROWSER_ARGS
        launch = self._playwright.chromium.launch
        self._browser = launch(executable_path=exe, args=args) if exe else launch(args=args)

    def new_context(self, **options):
        context = self._browser.new_context(**options)
        self._contexts.append(context)
        context.on("close", lambda c: self._contexts.remove(c) if c in self._contexts else None)
        return context

    @staticmethod
    def page_paints(page, timeout_ms: int = 5000) -> bool:
        """Does `page` still get animation frames? (Asked from here, not with wait_for_function: a page whose CSP is
        in force refuses the `new Function` that one compiles.)"""
        try:
            with bounded(2 * timeout_ms / 1000 + 10):
                return BrowserHolder._frames_come(page, timeout_ms)
        except Exception:  # ProbeTimedOut, or the page or browser went away
            return False

    @staticmethod
    def _frames_come(page, timeout_ms: int) -> bool:
        try:
            # Frames first, and no screenshot before them: a screenshot makes the page produce a frame, which
            # can start a stalled page again, and then the probe would report a stall it had just ended. A page
            # whose main thread never answers (CI once hung here 40 min after a test had failed) is caught by the
            # caller's `bounded`.
            page.evaluate("""() => { window.__paintProbe = false;
              requestAnimationFrame(() => requestAnimationFrame(() => { window.__paintProbe = true; })); }""")
            deadline = time.monotonic() + timeout_ms / 1000
            while time.monotonic() < deadline:
                if page.evaluate("window.__paintProbe === true"):
                    return True
                time.sleep(0.1)
        except Exception:
            pass
        return False

    def forget_contexts(self) -> None:
        """A new test starts: the contexts opened so far are not its own."""
        self._contexts = []

    def stalled_pages(self) -> list[str]:
        """URLs of the open pages of the contexts opened since forget_contexts() that get no animation frames."""
        return [
            page.url
            for context in list(self._contexts)
            for page in context.pages
            if not page.is_closed() and not self.page_paints(page)
        ]

    def paints(self) -> bool:
        """Does a fresh page of this browser get animation frames?"""
        try:
            context = self._browser.new_context()
            try:
                page = context.new_page()
                page.set_content("<p>frames?</p>")
                return self.page_paints(page)
            finally:
                context.close()
        except Exception:
            return False

    def close(self) -> None:
        self._browser.close()

    def __getattr__(self, name):
        return getattr(self._browser, name)


_holder: BrowserHolder | None = None


@pytest.fixture(scope="session")
def browser():
    global _holder
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        _holder = BrowserHolder(p)
        yield _holder
        _holder.close()
        _holder = None


def pytest_runtest_setup(item):
    if _holder is not None:
        _holder.forget_contexts()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A browser test that failed while one of its pages had stopped painting is reported as HeadlessFramesStopped,
    the one failure that is re-run (Playwright's own waits, e.g. a click's "stable" check, hang on frames too); if the
    whole browser stopped painting, the re-run gets a new one. A test that failed on pages that still paint failed."""
    if call.when == "call" and call.excinfo is not None and _holder is not None and item.get_closest_marker("e2e"):
        stalled = [] if call.excinfo.errisinstance(HeadlessFramesStopped) else _holder.stalled_pages()
        if stalled:
            try:
                raise HeadlessFramesStopped(
                    f"no animation frames in {', '.join(stalled)} after this failure: {call.excinfo.exconly()}"
                ) from call.excinfo.value
            except HeadlessFramesStopped:
                call.excinfo = pytest.ExceptionInfo.from_current()
        if call.excinfo.errisinstance(HeadlessFramesStopped) and not _holder.paints():
            _holder.launch()
    yield


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


def _open_context(browser, base: str, **context_options):
    # Playwright's wait_for_function compiles its predicate with `new Function`, which the pages' CSP forbids;
    # test_csp.py opens its pages with the policy in force (bypass_csp=False) and checks everything still works.
    context_options.setdefault("bypass_csp", True)
    context = browser.new_context(locale="zh-CN", service_workers="block", **context_options)
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


@pytest.fixture
def page(browser, base_url):
    """A fresh desktop page (1280×800); asserts at teardown that nothing unclean happened."""
    context, page = _open_context(browser, base_url, viewport={"width": 1280, "height": 800})
    yield page
    _close_and_check(context, page)


@pytest.fixture
def mobile_page(browser, base_url):
    """A fresh phone-sized page (390×844, touch); same checks as `page`."""
    context, page = _open_context(
        browser, base_url, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    yield page
    _close_and_check(context, page)


def artifact(name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name


FRAMES_JS = """() => new Promise((resolve) => {
  // Two animation frames, or 250 ms if none comes: headless Chromium can stop producing frames under load, and an
  // evaluate() waiting on requestAnimationFrame alone then never returns (a full run hung here until pytest-timeout).
  // Resolves true when the frames came.
  let done = false;
  const end = (painted) => { if (!done) { done = true; resolve(painted); } };
  requestAnimationFrame(() => requestAnimationFrame(() => end(true)));
  setTimeout(() => end(false), 250);
})"""


def wait_frames(page) -> None:
    """Let the page lay out and paint (two frames, bounded: FRAMES_JS)."""
    page.evaluate(FRAMES_JS)


# How long read_through waits, in all, for one widget near the view to mount, and for frames to come back.
WIDGET_PATIENCE_MS = 8000
FRAME_PATIENCE_MS = 10000
READ_THROUGH_LIMIT_S = 180  # a few seconds normally; minutes only if every widget used up its patience


def read_through(page) -> None:
    """Scroll the page from top to bottom half a screen at a time, as a reader does, and back to the top: every
    section is rendered once (content-visibility: auto, theme/css/base.css), and every widget's script is loaded
    a screen before its widget comes into view (theme/js/site/lazy-widgets.js). Like a reader, who spends seconds
    on a screen, it moves on once the widgets within a screen of the view have mounted: a loaded machine must not
    make the scroll outrun the scripts, or a test sees shifts no reader would.

    Bounded: a widget that has not mounted after WIDGET_PATIENCE_MS of waiting in all is no longer waited for (the
    caller's own checks then name it), and frames missing for FRAME_PATIENCE_MS raise HeadlessFramesStopped
    instead of scrolling on for many minutes (a CI run hung 15 min here)."""
    # bounded from here too: in-page timers bound the scroll, but a renderer that stops answering never returns the
    # evaluate (a clean-clone run waited here 5 min, until its worker was sent pytest-timeout's signal by hand)
    result = evaluate_or_stalled(
        page,
        """async ([widgetPatience, framePatience]) => {
      const frames = """
        + FRAMES_JS
        + """;
      const waited = new Map(); // widget → ms spent waiting for it
      let lastFrame = performance.now();
      const pending = () => [...document.querySelectorAll('.widget[data-widget]')].filter((w) => {
        if (w.dataset.ready || (waited.get(w) || 0) >= widgetPatience) return false;
        const r = w.getBoundingClientRect();
        return r.bottom > -innerHeight && r.top < 2 * innerHeight;
      });
      const paint = async () => {
        if (await frames()) lastFrame = performance.now();
        return performance.now() - lastFrame < framePatience;
      };
      const settled = async () => {
        for (let near = pending(); near.length; near = pending()) {
          const t = performance.now();
          await new Promise((r) => setTimeout(r, 50));
          for (const w of near) waited.set(w, (waited.get(w) || 0) + performance.now() - t);
        }
      };
      const step = Math.max(innerHeight / 2, 200);
      for (let y = 0, i = 0; y < document.documentElement.scrollHeight && i < 2000; y += step, i++) {
        window.scrollTo(0, y);
        if (!(await paint())) return {stalled: y};
        if (i > 0) await settled();  // before the first scroll, widgets below the view wait for the reader to start
      }
      window.scrollTo(0, 0);
      await frames();
      return {stalled: null};
    }""",
        [WIDGET_PATIENCE_MS, FRAME_PATIENCE_MS],
        seconds=READ_THROUGH_LIMIT_S,
    )
    if result["stalled"] is not None:
        raise HeadlessFramesStopped(
            f"{page.url}: no animation frame for {FRAME_PATIENCE_MS / 1000:.0f} s "
            f"(scrolled to {result['stalled']:.0f} px)"
        )


def evaluate_or_stalled(page, expression: str, arg=None, seconds: float = 60):
    """`page.evaluate` (which has no timeout of its own) that gives up after `seconds` with HeadlessFramesStopped, the
    failure that is re-run: in CI a contrast check's evaluate (canvas read-backs) once waited until pytest-timeout's
    15 minutes on a page that had stopped painting."""
    try:
        with bounded(seconds):
            return page.evaluate(expression, arg)
    except ProbeTimedOut as exc:
        raise HeadlessFramesStopped(f"{page.url}: no answer to an evaluate in {seconds:g} s") from exc


def mount_all_widgets(page) -> None:
    """Bring every widget near the viewport (lazy widget kinds mount only then: theme/js/site/lazy-widgets.js) and
    wait until each has mounted."""
    read_through(page)
    for widget in page.locator(".widget[data-widget]").all():
        widget.scroll_into_view_if_needed()
    page.wait_for_function(
        "[...document.querySelectorAll('.widget[data-widget]')].every(w => w.dataset.ready === 'true')"
    )
    evaluate_or_stalled(page, "window.scrollTo(0, 0)")
