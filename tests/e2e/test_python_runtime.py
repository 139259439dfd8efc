"""The self-hosted Python runtime in a real Chromium, over http (under a sub-path) and from file://.

A tiny harness page (no site pipeline needed) loads assets/python/python-runtime.js; one page per
transport is shared by the tests below (each Pyodide boot costs seconds).  Every request the page makes
is recorded: nothing may leave the test server / the file:// folder.
Timings are written to test-artifacts/python-runtime-timings.json.
"""

from __future__ import annotations

import ast
import functools
import http.server
import json
import os
import re
import shutil
import socketserver
import threading
import time
from pathlib import Path

import pytest

from builder.bundle import browser_data_prefix  # noqa: E402
from builder.runtime import prepare_python_runtime  # noqa: E402
from builder.runtime.wrappers import asset_holding  # noqa: E402
from tests.conftest import ROOT, TEST_CACHE  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("python-runtime")]

SUBPATH = "course/sub"  # the harness lives below a sub-path, like GitHub Pages' /<repo>/
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
HARNESS = """<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8"><title>Python runtime harness</title>
<link rel="icon" href="data:,"></head>
<body><p id="status">idle</p>
<script src="assets/python/python-runtime.js"></script>
<script>
  window.progressLog = [];
  Course.python.getRuntime().addEventListener("statechange", (e) => {
    document.getElementById("status").textContent = e.detail.state;
  });
</script>
</body></html>
"""
TIMINGS: dict[str, dict] = {}


def _chromium() -> str | None:
    env = os.environ.get("CHROMIUM_PATH")
    if env == "playwright":
        return None
    if env and os.path.exists(env):
        return env
    for cand in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if cand and os.path.exists(cand):
            return cand
    return None


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
    }

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def harness_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pyharness")
    page_dir = root / SUBPATH
    info = prepare_python_runtime(page_dir / "assets" / "python", cache_dir=TEST_CACHE, project_root=ROOT)
    TIMINGS["bytes"] = {
        "http": info.http_bytes,
        "file": info.file_bytes,
        "python-runtime.js": (page_dir / "assets" / "python" / "python-runtime.js").stat().st_size,
    }
    (page_dir / "index.html").write_text(HARNESS, "utf-8")
    return root


@pytest.fixture(scope="module")
def http_server(harness_root):
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(harness_root)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


# The browser is the session-wide `browser` fixture of tests/e2e/conftest.py: one Playwright per test
# process (a second sync_playwright() in the same process fails with "Sync API inside the asyncio loop").


class Session:
    def __init__(self, transport, base, context, page):
        self.transport, self.base, self.context, self.page = transport, base, context, page
        self.requests: list[str] = []
        self.errors: list[str] = []

    def allowed(self, url: str) -> bool:
        return url.startswith(self.base) or url.startswith(("blob:", "data:", "about:"))

    def external(self) -> list[str]:
        return [u for u in self.requests if not self.allowed(u)]

    def js(self, script: str, arg=None):
        return self.page.evaluate(script, arg)


@pytest.fixture(scope="module", params=["http", "file"])
def session(request, browser, harness_root, http_server):
    transport = request.param
    base = (http_server if transport == "http" else harness_root.as_uri() + "/") + SUBPATH + "/"
    context = browser.new_context(bypass_csp=True, service_workers="block")
    page = context.new_page()
    s = Session(transport, base, context, page)
    context.on("request", lambda r: s.requests.append(r.url))
    page.on("pageerror", lambda e: s.errors.append(str(e)))
    page.on("console", lambda m: s.errors.append(m.text) if m.type == "error" else None)
    page.set_default_timeout(60_000)
    page.goto(base + "index.html")
    yield s
    external = s.external()
    context.close()
    assert not external, f"requests left the harness: {external}"
    assert not s.errors, f"page errors: {s.errors}"


FIRST_RESULT = """async () => {
  const rt = Course.python.getRuntime();
  const t0 = performance.now();
  const labels = [];
  await rt.load({ onProgress: (p) => labels.push(p.label) });
  const tLoaded = performance.now() - t0;
  const r = await rt.run("import numpy as np\\nnp.arange(6).reshape(2,3)");
  return { r, tLoaded, tFirst: performance.now() - t0, labels, state: rt.state };
}"""


def test_load_and_numpy_repr(session):
    res = session.js(FIRST_RESULT)
    assert res["r"] == {"ok": True, "repr": "array([[0, 1, 2],\n       [3, 4, 5]])", "error": None, "truncated": False}
    assert res["state"] == "ready"
    assert any(label.startswith("正在加载 Python 运行环境… ") and label.endswith(" MB") for label in res["labels"])
    assert res["labels"][-1] == "Python 已就绪"
    # the interpreter came from the build's memory snapshot, not from a fresh CPython start
    marks = [label for label, _ in session.js("Course.python.getRuntime().timings")]
    assert "pyodide-restored" in marks and "pyodide-booted" not in marks, marks
    TIMINGS.setdefault(session.transport, {})["cold_first_numpy_ms"] = round(res["tFirst"])
    # load() is idempotent and the state is exposed
    assert session.js("Course.python.getRuntime().load().then(() => Course.python.getRuntime().state)") == "ready"


def test_stdout_streams_and_traceback_names_cell_line(session):
    res = session.js("""async () => {
      const rt = Course.python.getRuntime(); const out = [], err = [];
      const a = await rt.run("import sys\\nprint('你好')\\nprint('oops', file=sys.stderr)\\nfor i in range(3): print(i)",
                             { onStdout: (t) => out.push(t), onStderr: (t) => err.push(t), cell: "s1" });
      const b = await rt.run("def f(x):\\n    return 1 / x\\n\\nf(0)", { cell: 7 });
      const c = await rt.run("x = 40"); const d = await rt.run("x + 2");
      return { a, out: out.join(""), err: err.join(""), b, d };
    }""")
    assert res["a"]["ok"] and res["a"]["repr"] is None
    assert res["out"] == "你好\n0\n1\n2\n" and res["err"] == "oops\n"
    b = res["b"]
    assert b["ok"] is False and b["error"]["type"] == "ZeroDivisionError"
    tb = b["error"]["traceback"]
    assert 'File "<cell-7>", line 4, in <module>' in tb and 'File "<cell-7>", line 2, in f' in tb
    assert "_pyodide" not in tb and "course_runtime" not in tb
    assert res["d"]["repr"] == "42"  # one shared namespace per page


def test_attention_core_importable(session):
    res = session.js("""() => Course.python.getRuntime().run(
        "import attention_core, numpy\\nattention_core.__name__, numpy.__version__")""")
    assert res["ok"], res["error"]
    assert res["repr"] == "('attention_core', '2.0.2')"


def _main_thread_task_cpu_ms(session, action) -> list[float]:
    """CPU time (ms) of every task the page's main thread ran during `action()`, from a Chromium trace.
    Thread time, not wall time: on a loaded machine a short task can take long by the clock while the
    thread waits for a core (the wall-clock measures of this test used to fail that way)."""
    cdp = session.context.new_cdp_session(session.page)
    events: list[dict] = []
    done: list[bool] = []
    cdp.on("Tracing.dataCollected", lambda e: events.extend(e["value"]))
    cdp.on("Tracing.tracingComplete", lambda e: done.append(True))
    cdp.send("Tracing.start", {"categories": "toplevel", "transferMode": "ReportEvents"})
    try:
        action()
    finally:
        cdp.send("Tracing.end")
        while not done:
            session.page.wait_for_timeout(50)
        cdp.detach()
    main = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"
    }
    assert main, "no renderer main thread in the trace"
    return [
        e["tdur"] / 1000
        for e in events
        if e.get("ph") == "X"
        and "tdur" in e
        and (e["pid"], e["tid"]) in main
        and e.get("name") in ("ThreadControllerImpl::RunTask", "RunTask")
    ]


def test_huge_output_is_truncated_and_page_stays_responsive(session):
    """A million prints: the output is truncated, and no main-thread task comes near 0.3 s of CPU (a freeze
    would); a heartbeat shows the page kept running its own timers meanwhile."""

    def print_a_million_lines():
        session.js("""() => { const rt = Course.python.getRuntime(); window.big = { lines: 0, msgs: 0, beats: 0 };
          const beat = setInterval(() => { big.beats++; }, 20);
          window.bigDone = rt.run("for i in range(10**6): print(i)",
            { onStdout: (t) => { big.msgs++; big.lines += t.split("\\n").length - 1; } })
            .then((r) => { big.result = r; clearInterval(beat); }); }""")
        assert session.js("1+1") == 2  # the page answers while the worker prints
        session.page.wait_for_function("window.big.result !== undefined", timeout=120_000)

    tasks = _main_thread_task_cpu_ms(session, print_a_million_lines)
    big = session.js("window.big")
    assert tasks and max(tasks) < 300, f"longest main-thread task: {max(tasks, default=0):.0f} ms of CPU"
    assert big["beats"] >= 5, big  # the print took a while and the page's own timers kept firing
    assert big["result"]["truncated"] is True and big["result"]["ok"] is True
    assert big["lines"] == 2000 and big["msgs"] < 100
    t = time.perf_counter()
    assert session.js("Course.python.getRuntime().run('1+1')")["repr"] == "2"
    assert time.perf_counter() - t < 2.0


def test_stop_interrupts_infinite_loop_and_recovers(session):
    res = session.js("""async () => {
      const rt = Course.python.getRuntime();
      const draw = "import random, numpy\\n[random.random(), int(numpy.random.default_rng().integers(1 << 62)), float(numpy.random.rand())]";
      const before = await rt.run(draw);
      await rt.run("keep = 1");
      const looping = rt.run("while True: pass");
      let stopped = null; looping.catch((e) => { stopped = { type: e.type, message: e.message }; });
      // a user notices a hang after a few seconds; meanwhile the runtime boots a standby worker
      await new Promise((r) => setTimeout(r, 4000));
      const stateWhileLooping = rt.state;
      const t0 = performance.now();
      await rt.stop();
      const tStop = performance.now() - t0;
      const out = [];
      const r = await rt.run("print(1+1)", { onStdout: (t) => out.push(t) });
      const tRecovered = performance.now() - t0;
      const lost = await rt.run("keep");
      const after = await rt.run(draw);
      return { stateWhileLooping, tStop, tRecovered, stopped, r, out: out.join(""), lost, state: rt.state,
               before, after, marks: rt.timings.map(([label]) => label) };
    }""")
    assert res["stateWhileLooping"] == "running"
    assert res["stopped"] and res["stopped"]["type"] == "Stopped"
    assert res["tStop"] < 1000
    assert res["r"]["ok"] and res["out"] == "2\n"
    assert res["tRecovered"] < 5000, f"recovered after {res['tRecovered']:.0f} ms"
    assert res["lost"]["error"]["type"] == "NameError"  # fresh worker, fresh namespace
    assert res["state"] == "ready"
    # the standby worker restored the same snapshot (made from a fixed entropy stream), yet draws its own random
    # numbers: from `random`, a new NumPy generator and NumPy's global one
    assert "standby:pyodide-restored" in res["marks"], res["marks"]
    assert res["before"]["ok"] and res["after"]["ok"]
    before, after = ast.literal_eval(res["before"]["repr"]), ast.literal_eval(res["after"]["repr"])
    assert all(b != a for b, a in zip(before, after)), (before, after)
    TIMINGS.setdefault(session.transport, {})["stop_to_print_ms"] = round(res["tRecovered"])


def test_reset_clears_namespace(session):
    res = session.js("""async () => { const rt = Course.python.getRuntime();
      await rt.run("z = 3"); await rt.reset(); return await rt.run("z"); }""")
    assert res["error"]["type"] == "NameError"


def test_warm_reload(session):
    """Second visit: browser cache (http) / OS cache (file://)."""
    session.page.reload()
    res = session.js(FIRST_RESULT)
    assert res["r"]["ok"]
    TIMINGS.setdefault(session.transport, {})["warm_first_numpy_ms"] = round(res["tFirst"])


def test_zz_only_local_requests(session):
    assert session.requests, "no requests recorded"
    assert not session.external(), session.external()
    # one shipped form for both transports: the wrapper scripts (builder/runtime/wrappers.py)
    assert any(re.search(r"/pyodide\.asm\.wasm\.\d+\.js$", u) for u in session.requests)
    assert not any(u.endswith(".wasm") for u in session.requests)
    out = ROOT / "test-artifacts"
    out.mkdir(exist_ok=True)
    (out / "python-runtime-timings.json").write_text(json.dumps(TIMINGS, indent=2), "utf-8")


def _runtime_index(py_dir: Path) -> dict:
    return json.loads(
        (py_dir / "runtime-index.js")
        .read_text("utf-8")[len(browser_data_prefix("python", "index")) :]
        .rstrip()
        .rstrip(";")
    )


def corrupt_wrapper(wrapper: Path) -> None:
    """Change one payload character inside a wrapper script's base-85 literal to another digit (the script
    still parses and the payload keeps its length: only its sha256 differs).  "0" and "1" never make a
    group overflow."""
    data = bytearray(wrapper.read_bytes())
    i = data.index(b'"]="') + len(b'"]="') + 100
    data[i] = ord("1") if data[i] == ord("0") else ord("0")
    wrapper.write_bytes(bytes(data))


@pytest.mark.parametrize("transport", ["http", "file"])
@pytest.mark.parametrize("victim", ["snapshot", "pyodide.asm.js", "pyodide.asm.wasm"])
def test_an_asset_that_is_not_the_indexed_one_is_refused(browser, harness_root, tmp_path, transport, victim):
    """Every asset is checked against the sha256 in the runtime index before it is used — by the Python
    worker (scripts, wasm, stdlib) or by the unpacker (snapshot, packs) — and a mismatch fails the load
    with the file's name, instead of running other bytes.  (The wasm is compiled while it is checked;
    it is instantiated only once the hash matched.)"""
    root = tmp_path / "site"
    shutil.copytree(harness_root, root)
    py_dir = root / SUBPATH / "assets" / "python"
    index = _runtime_index(py_dir)
    name = index["snapshot"]["name"] if victim == "snapshot" else victim
    entry = asset_holding(index, name)  # the snapshot ships in the boot bundle
    corrupt_wrapper(py_dir / entry["wrappers"][0])
    if transport == "http":
        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}/{SUBPATH}/"
    else:
        server, base = None, root.as_uri() + f"/{SUBPATH}/"
    context = browser.new_context(bypass_csp=True, service_workers="block")
    try:
        page = context.new_page()
        page.goto(base + "index.html")
        message = page.evaluate("""async () => {
          try { await Course.python.getRuntime().load(); return "loaded"; } catch (e) { return String(e.message); }
        }""")
    finally:
        context.close()
        if server:
            server.shutdown()
            server.server_close()
    assert message != "loaded"
    assert f"{entry['name']}: sha256 " in message and f"expected {entry['sha256']}" in message, message


def test_without_a_memory_snapshot_python_boots_from_scratch(browser, tmp_path):
    """A build without Node makes no snapshot: the worker then boots CPython, installs the packs and links
    NumPy's libraries itself (slower, same results)."""
    page_dir = tmp_path / SUBPATH
    prepare_python_runtime(
        page_dir / "assets" / "python", cache_dir=TEST_CACHE, project_root=ROOT, memory_snapshot_enabled=False
    )
    (page_dir / "index.html").write_text(HARNESS, "utf-8")
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(tmp_path)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = browser.new_context(bypass_csp=True, service_workers="block")
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/{SUBPATH}/index.html")
        res = page.evaluate(FIRST_RESULT)
        marks = [label for label, _ in page.evaluate("Course.python.getRuntime().timings")]
        ac = page.evaluate("Course.python.getRuntime().run('import attention_core\\nattention_core.__name__')")
    finally:
        context.close()
        server.shutdown()
        server.server_close()
    assert res["r"]["repr"] == "array([[0, 1, 2],\n       [3, 4, 5]])"
    assert "pyodide-booted" in marks and "pyodide-restored" not in marks, marks
    assert ac["repr"] == "'attention_core'"


CACHED_KEYS = """async () => {
  const cache = await caches.open("course-python-inflated");
  return (await cache.keys()).map((r) => r.url);
}"""


def test_a_returning_reader_boots_from_the_inflated_bytes_in_cache_storage(browser, harness_root, http_server):
    """Over http the unpacker keeps the inflated wasm, snapshot and packs in Cache Storage (keyed by the sha256
    they matched), once Python is up; the next page boots from there without fetching or inflating them.
    Older builds' entries for the same site are dropped, other sites' entries on the origin are not."""
    base = http_server + SUBPATH + "/"
    index = _runtime_index(harness_root / SUBPATH / "assets" / "python")
    # what the unpacker inflates: the main wasm and the boot bundle (the stdlib, the snapshot and the packs in one asset)
    bundle = [a["name"] for a in index["assets"] if a.get("parts")]
    assert len(bundle) == 1 and {p["name"] for p in asset_holding(index, bundle[0])["parts"]} == {
        "python_stdlib.zip",
        index["snapshot"]["name"],
    } | {p["name"] for p in index["packs"]}
    unpacked = ["pyodide.asm.wasm", *bundle]
    sha = {a["name"]: a["sha256"] for a in index["assets"]}
    py_url = base + "assets/python/"
    expected = sorted(f"{py_url}{name}?inflated={sha[name]}" for name in unpacked)
    stale = f"{py_url}{bundle[0]}?inflated={'0' * 64}"
    other_site = http_server + "another-course/assets/python/x.snap?inflated=" + "1" * 64
    context = browser.new_context(bypass_csp=True, service_workers="block")
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(base + "index.html")
        page.evaluate(
            """async (keys) => { const cache = await caches.open("course-python-inflated");
          for (const k of keys) await cache.put(k, new Response("stale")); }""",
            [stale, other_site],
        )
        first = page.evaluate(FIRST_RESULT)
        deadline = time.monotonic() + 30  # stored once Python is up, in the background
        while True:
            keys = page.evaluate(CACHED_KEYS)
            if all(k in keys for k in expected) and stale not in keys or time.monotonic() > deadline:
                break
            page.wait_for_timeout(200)
        sizes = page.evaluate(
            """async (keys) => { const cache = await caches.open("course-python-inflated");
          return Promise.all(keys.map(async (k) => (await (await cache.match(k)).arrayBuffer()).byteLength)); }""",
            expected,
        )
        page.close()
        first_visit = list(requests)
        requests.clear()
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(base + "index.html")
        second = page.evaluate(FIRST_RESULT)
        attention = page.evaluate("Course.python.getRuntime().run('import attention_core\\nattention_core.__name__')")
        second_visit = list(requests)
        # Partly cached (one entry gone): the missing one is fetched and stored again, the others stay.
        page.evaluate("""async (key) => (await caches.open("course-python-inflated")).delete(key)""", expected[-1])
        page.close()
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(base + "index.html")
        third = page.evaluate(FIRST_RESULT)
        deadline = time.monotonic() + 30
        while expected[-1] not in (after_partial := page.evaluate(CACHED_KEYS)) and time.monotonic() < deadline:
            page.wait_for_timeout(200)
        page.wait_for_timeout(500)  # the clean-up runs right after the store
        after_partial = page.evaluate(CACHED_KEYS)
    finally:
        context.close()
    assert first["r"]["ok"] and second["r"]["repr"] == first["r"]["repr"] == "array([[0, 1, 2],\n       [3, 4, 5]])"
    assert attention["repr"] == "'attention_core'"
    assert sorted(k for k in keys if k.startswith(py_url)) == expected and other_site in keys
    assert all(size > 10_000 for size in sizes), sizes  # inflated bytes, not the placeholder
    for name in unpacked:
        assert any(u.startswith(py_url + name) for u in first_visit), name
        assert not any(u.startswith(py_url + name) for u in second_visit), (name, second_visit)
    assert any(re.search(r"/pyodide\.asm\.js\.\d+\.js$", u) for u in second_visit)  # the rest: from http
    assert third["r"]["repr"] == first["r"]["repr"]
    assert sorted(k for k in after_partial if k.startswith(py_url)) == expected, after_partial
