#!/usr/bin/env python3
"""Browser performance benchmark of the built course (Playwright + Chromium). Run by hand or `make bench`;
never part of `make test`.

For every page, over http (127.0.0.1) and file://, as medians of --runs fresh-profile loads:
  bytes shipped before any code runs (HTML/CSS/JS/fonts, raw and gzip; Pyodide excluded and reported
  apart), DOMContentLoaded, time from DOMContentLoaded to the first widget ready, Cumulative Layout
  Shift, main-thread long tasks.
For the Python cells (first page with code cells): bytes downloaded on the first Run, click → first
output cold (fresh profile) and warm (same profile, new page), the longest main-thread task while
Python loads, and 停止 → ready again.  With --python-phone also the phone profile (390×844, CPU throttled
4× with CDP Emulation.setCPUThrottlingRate): click → first output cold and warm.
The offline weight: bytes of site/ (and of its assets/python/) and of the offline package (`zip_site`,
what `make zip` writes), always.
Prints a table and writes bench/out/site_bench.json.

    .venv/bin/python bench/site_bench.py [--runs 5] [--no-build] [--site DIR] [--python-phone]

--phone: the phone profile instead (issue 19): every page of the course (content/*.md), over http from
127.0.0.1, in a 390x844 touch viewport with the CPU slowed 4x (CDP Emulation.setCPUThrottlingRate); per page,
medians of --runs fresh contexts of total blocking time (sum over long tasks of their time beyond 50 ms, from
navigation to 5 s after the load event), the longest task, LCP, CLS (max), DOM element count and the bytes
loaded without a click (everything, Python runtime included). Writes bench/out/site_bench_phone.json.

    .venv/bin/python bench/site_bench.py --phone [--runs 3] [--no-build --site DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CHROMIUM_ARGS, chromium_executable, serve  # noqa: E402

BUDGETS = {
    "first_view_kb": 300,  # excluding Pyodide
    "widget_ready_ms": 100,  # after DOMContentLoaded
    "cls": 0.0,
    "python_long_task_ms": 50,  # no main-thread task longer than this while Python loads
    "first_output_cold_s": 1.5,  # http, Chromium (issue 30)
    "first_output_warm_s": 1.5,  # http
    "file_vs_http": 1.5,
    "first_figure_cold_s": 4.0,  # http, a matplotlib cell (issue 15)
    "first_figure_warm_s": 2.0,
}

# Installed before any page script: records CLS, long tasks and the moment the first widget is ready.
INIT_SCRIPT = """
window.__bench = {cls: 0, longTasks: [], widgetReady: null};
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (!e.hadRecentInput) __bench.cls += e.value;
  })
    .observe({type: 'layout-shift', buffered: true});
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) __bench.longTasks.push([e.startTime, e.duration]);
  })
    .observe({type: 'longtask', buffered: true});
} catch (e) {}
const __mo = new MutationObserver(() => {
  if (__bench.widgetReady === null && document.querySelector('[data-widget][data-ready="true"]')) {
    __bench.widgetReady = performance.now(); __mo.disconnect();
  }
});
__mo.observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ['data-ready']});
"""

# Clicks the first cell's 运行 and resolves with ms until its log shows the first output.
RUN_FIRST_CELL = """
async (index) => {
  const cell = document.querySelectorAll('.code-cell')[index];
  const log = cell.querySelector('.cell-log');
  const btn = cell.querySelector('[data-action="run"]');
  const t0 = performance.now();
  // A cell that fails or never answers ends the wait with its status, instead of hanging the benchmark.
  const done = new Promise((resolve, reject) => {
    const status = () => (cell.querySelector('.cell-status') || {}).textContent || '';
    const give_up = setTimeout(() => {
      mo.disconnect(); reject(new Error('no output after 120 s: ' + status()));
    }, 120000);
    const mo = new MutationObserver(() => {
      const drawn = cell.querySelector('img.cell-figure[src^="blob:"]');
      if (cell.querySelector('.cell-output').dataset.origin === 'browser' && (log.textContent.length > 0 || drawn)) {
        mo.disconnect(); clearTimeout(give_up); resolve(performance.now() - t0);
      } else if (/出错|无法|失败/.test(status())) {
        mo.disconnect(); clearTimeout(give_up); reject(new Error('the cell failed: ' + status()));
      }
    });
    mo.observe(cell, {subtree: true, childList: true, characterData: true, attributes: true});
  });
  btn.click();
  const ms = await done;
  return {ms, t0};
}
"""


def classify(url: str, resource_type: str) -> str:
    path = urlparse(url).path
    if "/assets/python/" in path:
        return "python"
    if resource_type == "document" or path.endswith(".html"):
        return "html"
    if resource_type == "stylesheet" or path.endswith(".css"):
        return "css"
    if resource_type == "font" or path.endswith((".woff2", ".woff", ".ttf")):
        return "font"
    if resource_type == "script" or path.endswith(".js"):
        return "js"
    return "other"


class Traffic:
    """Every finished response, sized from the served file on disk (http and file:// serve the same built
    site).  Bodies are not pulled through the DevTools protocol: copying ~25 MB of Python assets out of the
    browser while Python boots competed with the boot for the CPU and inflated the cold time."""

    def __init__(self, page, site: Path):
        self.items: list[tuple[str, str]] = []
        self.page = page
        self.site = site
        page.on("requestfinished", lambda request: self.items.append((request.url, request.resource_type)))

    def _body(self, url: str) -> bytes:
        parsed = urlparse(url)
        if parsed.scheme == "file":
            path = Path(unquote(parsed.path))
        elif parsed.scheme in ("http", "https"):
            path = self.site / unquote(parsed.path).lstrip("/")
        else:  # data:, blob:
            return b""
        return path.read_bytes() if path.is_file() else b""

    def mark(self) -> int:
        return len(self.items)

    def settle(self, quiet_ms: int = 500) -> None:
        """Wait until no response has finished for `quiet_ms`."""
        seen = -1
        while seen != len(self.items):
            seen = len(self.items)
            self.page.wait_for_timeout(quiet_ms)

    def summary(self, start: int = 0, end: int | None = None) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for url, rtype in self.items[start:end]:
            if url.startswith(("data:", "blob:")):
                continue
            body = self._body(url)
            kind = classify(url, rtype)
            slot = out.setdefault(kind, {"raw": 0, "gzip": 0, "files": 0})
            slot["raw"] += len(body)
            slot["gzip"] += len(gzip.compress(body, 6)) if body else 0
            slot["files"] += 1
        return out


def new_page(browser):
    # bypass_csp: Playwright's wait_for_function evaluates a string, which the pages' CSP forbids (the pages' own
    # scripts run the same either way)
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, locale="zh-CN", service_workers="block", bypass_csp=True
    )
    page = context.new_page()
    page.add_init_script(INIT_SCRIPT)
    return context, page


def measure_load(browser, url: str, site: Path) -> dict:
    context, page = new_page(browser)
    traffic = Traffic(page, site)
    page.goto(url, wait_until="load")
    page.wait_for_timeout(400)
    m = page.evaluate("""() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const b = window.__bench;
      return {dcl: nav.domContentLoadedEventStart, load: nav.loadEventEnd,
              widgetReady: b.widgetReady === null ? null : b.widgetReady - nav.domContentLoadedEventStart,
              cls: b.cls, longTasks: b.longTasks, widgets: document.querySelectorAll('[data-widget]').length};
    }""")
    m["bytes"] = traffic.summary()
    context.close()
    return m


def python_context(playwright, browser, profile: str):
    """A fresh browser context for one cold/warm pair.  "disk" (default): a new on-disk profile, like a real
    visitor's first visit — Chromium keeps no V8 code cache (compiled wasm) in incognito contexts, which
    would make "warm" measure something no real visitor sees.  "incognito": browser.new_context()."""
    if profile == "incognito":
        context, page = new_page(browser)
        return context, page, lambda: None
    user_dir = tempfile.mkdtemp(prefix="bench-profile-")
    exe = chromium_executable()
    context = playwright.chromium.launch_persistent_context(
        user_dir,
        **({"executable_path": exe} if exe else {}),
        args=CHROMIUM_ARGS,
        viewport={"width": 1280, "height": 800},
        locale="zh-CN",
        service_workers="block",
    )
    page = context.pages[0] if context.pages else context.new_page()
    page.add_init_script(INIT_SCRIPT)
    return context, page, lambda: shutil.rmtree(user_dir, ignore_errors=True)


def measure_python(new_context, url: str, runs: int, site: Path) -> dict:
    cold, warm, stop_ready, stop_output, long_task_max, first_run_bytes = [], [], [], [], [], None
    for _ in range(runs):
        context, page, cleanup = new_context()
        traffic = Traffic(page, site)
        page.goto(url, wait_until="load")
        start = traffic.mark()
        res = page.evaluate(RUN_FIRST_CELL, 0)
        cold.append(res["ms"])
        traffic.settle()
        if first_run_bytes is None:
            first_run_bytes = traffic.summary(start).get("python", {"raw": 0, "gzip": 0, "files": 0})
        # "while Python loads": tasks that start between the click and the first output
        tasks = page.evaluate(
            "([t0, t1]) => window.__bench.longTasks.filter(([s]) => s >= t0 && s < t1).map(([, d]) => d)",
            [res["t0"], res["t0"] + res["ms"]],
        )
        long_task_max.append(max(tasks, default=0.0))
        # Warm: same profile (HTTP cache, V8 compiled-wasm cache), new page — after leaving the first one, as
        # a reader navigating on does (an open first page would keep booting its standby worker meanwhile).
        page.close()
        page2 = context.new_page()
        page2.add_init_script(INIT_SCRIPT)
        page2.goto(url, wait_until="load")
        warm.append(page2.evaluate(RUN_FIRST_CELL, 0)["ms"])
        # 停止: a runaway loop, then Stop; time until the runtime is ready and until print(1+1) answers.
        page2.evaluate("""() => { window.__rt = Course.python.getRuntime();
            window.__loop = __rt.run('while True: pass', {}).catch(() => 'stopped'); }""")
        page2.wait_for_timeout(500)
        r = page2.evaluate("""async () => {
            const rt = window.__rt; const t0 = performance.now();
            const stopped = rt.stop();
            await stopped; const ready = performance.now() - t0;
            let out = '';
            const res = await rt.run('print(1+1)', {onStdout: (t) => { out += t; }});
            return {ready, output: performance.now() - t0, out};
        }""")
        assert r["out"].strip() == "2", r
        stop_ready.append(r["ready"])
        stop_output.append(r["output"])
        context.close()
        cleanup()
    med = statistics.median
    return {
        "first_run_bytes": first_run_bytes,
        "cold_ms": med(cold),
        "warm_ms": med(warm),
        "stop_ready_ms": med(stop_ready),
        "stop_to_output_ms": med(stop_output),
        "long_task_max_ms": max(long_task_max),
        "samples": {"cold": cold, "warm": warm, "stop_to_output": stop_output, "long_task_max": long_task_max},
    }


# Clicks the index-th cell's 运行 and resolves with ms until a figure from the reader's run (blob: <img>) has
# decoded, and the bytes of the optional packs (matplotlib & co.) the page fetched meanwhile.
RUN_TO_FIGURE = """
async (index) => {
  const cell = document.querySelectorAll('.code-cell')[index];
  const t0 = performance.now();
  // A cell that fails (or never draws) ends the wait with its status, instead of hanging the benchmark.
  const done = new Promise((resolve, reject) => {
    const give_up = setTimeout(() => {
      mo.disconnect(); reject(new Error('no figure after 180 s: ' + status()));
    }, 180000);
    const status = () => (cell.querySelector('.cell-status') || {}).textContent || '';
    const mo = new MutationObserver(() => {
      const img = cell.querySelector('img.cell-figure[src^="blob:"]');
      if (img) { mo.disconnect(); clearTimeout(give_up); img.decode().then(() => resolve(performance.now() - t0)); }
      else if (/出错|无法/.test(status())) {
        mo.disconnect(); clearTimeout(give_up); reject(new Error('the cell failed: ' + status()));
      }
    });
    mo.observe(cell, {subtree: true, childList: true, attributes: true, characterData: true});
  });
  cell.querySelector('[data-action="run"]').click();
  const ms = await done;
  // the worker fetches the packages (not in this page's Resource Timing): the wrapper bytes of every wheel the
  // boot does not load (matplotlib and its dependencies; the course's own packages are small)
  const runtimeIndex = Course.python.index;
  const rt = Course.python.getRuntime();
  while (rt.state === 'running') await new Promise((r) => setTimeout(r, 20)); // its last marks come with the result
  const bytes = runtimeIndex.assets.filter((a) => a.name.endsWith('.whl') && !runtimeIndex.boot.includes(a.name))
    .reduce((s, a) => s + a.wrapperSize, 0);
  // where the time went, in ms after the click (the runtime's own marks, worker.js/runtime.js): Python ready, the
  // packages loaded, the cell done (its figure then still travels to the page and decodes)
  const at = {};
  for (const [label, t] of rt.timings) if (t >= t0) at[label] = Math.round(t - t0);
  const phases = {ready: at['ready'], packs: at['packages-loaded'], cell: at['run-end']};
  return {ms, bytes, phases};
}
"""


def figure_cell(site: Path) -> tuple[str, int] | None:
    """(page, index of its first cell that imports matplotlib), or None."""
    import re

    for p in sorted(site.glob("*.html")):
        cells = re.findall(r'<div class="code-cell".*?<pre class="cell-source".*?</pre>', p.read_text("utf-8"), re.S)
        for i, c in enumerate(cells):
            if "matplotlib" in c:
                return p.name, i
    return None


def measure_figure(new_context, url: str, index: int, runs: int) -> dict:
    """Click → first figure, cold (fresh profile: Python and matplotlib downloaded) and warm (same profile, a
    new page: both from the HTTP cache and the inflated-bytes cache)."""
    cold, warm, extra = [], [], None
    phases: dict[str, list[dict]] = {"cold": [], "warm": []}
    for _ in range(runs):
        context, page, cleanup = new_context()
        page.goto(url, wait_until="load")
        r = page.evaluate(RUN_TO_FIGURE, index)
        cold.append(r["ms"])
        phases["cold"].append(r["phases"])
        extra = r["bytes"] if extra is None else extra
        page.close()
        page2 = context.new_page()
        page2.goto(url, wait_until="load")
        r = page2.evaluate(RUN_TO_FIGURE, index)
        warm.append(r["ms"])
        phases["warm"].append(r["phases"])
        context.close()
        cleanup()
    med = statistics.median

    def median_phases(samples: list[dict]) -> dict:
        return {
            k: med(p[k] for p in samples if p.get(k) is not None)
            if any(p.get(k) is not None for p in samples)
            else None
            for k in ("ready", "packs", "cell")
        }

    return {
        "cold_ms": med(cold),
        "warm_ms": med(warm),
        "matplotlib_bytes": extra,
        "phases_ms": {k: median_phases(v) for k, v in phases.items()},
        "samples": {"cold": cold, "warm": warm, "phases": phases},
    }


PHONE_VIEWPORT = {"width": 390, "height": 844}
PHONE_CPU_SLOWDOWN = 4


def throttle(context, page, rate: float = PHONE_CPU_SLOWDOWN) -> None:
    """The mobile-lab CPU: CDP Emulation.setCPUThrottlingRate on this page (set before it navigates)."""
    context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": rate})


def measure_python_phone(playwright, url: str, runs: int) -> dict:
    """Click → first output under the phone profile, cold (new on-disk profile) and warm (same profile, new
    page), like `measure_python` but at 390×844 with the CPU slowed down 4×."""
    cold, warm = [], []
    exe = chromium_executable()
    for _ in range(runs):
        user_dir = tempfile.mkdtemp(prefix="bench-phone-")
        context = playwright.chromium.launch_persistent_context(
            user_dir,
            **({"executable_path": exe} if exe else {}),
            args=CHROMIUM_ARGS,
            viewport=PHONE_VIEWPORT,
            is_mobile=True,
            has_touch=True,
            locale="zh-CN",
            service_workers="block",
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.add_init_script(INIT_SCRIPT)
            throttle(context, page)
            page.goto(url, wait_until="load")
            cold.append(page.evaluate(RUN_FIRST_CELL, 0)["ms"])
            page.close()
            page2 = context.new_page()
            page2.add_init_script(INIT_SCRIPT)
            throttle(context, page2)
            page2.goto(url, wait_until="load")
            warm.append(page2.evaluate(RUN_FIRST_CELL, 0)["ms"])
        finally:
            context.close()
            shutil.rmtree(user_dir, ignore_errors=True)
    med = statistics.median
    return {
        "cold_ms": med(cold),
        "warm_ms": med(warm),
        "samples": {"cold": cold, "warm": warm},
        "viewport": PHONE_VIEWPORT,
        "cpu_slowdown": PHONE_CPU_SLOWDOWN,
    }


def offline_weight(site: Path) -> dict:
    """Bytes of the built site, of its Python runtime folder, and of the offline package (`make zip`)."""
    from builder.zipsite import zip_site

    def tree(folder: Path) -> int:
        return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())

    with tempfile.TemporaryDirectory(prefix="bench-zip-") as tmp:
        zip_bytes = zip_site(site, Path(tmp) / "attention-course.zip").stat().st_size
    py = site / "assets" / "python"
    return {"site_bytes": tree(site), "python_bytes": tree(py) if py.is_dir() else 0, "zip_bytes": zip_bytes}


SEARCH_QUERIES = ("缩放", "softmax", "注意力机制")


def measure_search(browser, url: str, site: Path) -> dict:
    """The in-page search's latency (window.Course.search.search, the function every keystroke calls): median ms of
    20 calls per query, after one warm-up call (the index is loaded), and the index's size."""
    context, page = new_page(browser)
    page.goto(url)
    page.wait_for_function("window.Course && window.Course.search")
    medians = page.evaluate(
        """async (queries) => {
        const out = {};
        for (const q of queries) {
            await window.Course.search.search(q);
            const times = [];
            for (let i = 0; i < 20; i++) {
                const t0 = performance.now();
                await window.Course.search.search(q);
                times.push(performance.now() - t0);
            }
            times.sort((a, b) => a - b);
            out[q] = (times[9] + times[10]) / 2;
        }
        return out;
    }""",
        list(SEARCH_QUERIES),
    )
    context.close()
    return {"median_ms": medians, "index_bytes": (site / "assets" / "search-index.js").stat().st_size}


def median_load(browser, url: str, runs: int, site: Path) -> dict:
    samples = [measure_load(browser, url, site) for _ in range(runs)]
    med = statistics.median
    ready = [s["widgetReady"] for s in samples if s["widgetReady"] is not None]
    return {
        "bytes": samples[0]["bytes"],
        "dcl_ms": med(s["dcl"] for s in samples),
        "load_ms": med(s["load"] for s in samples),
        "widget_ready_ms": med(ready) if ready else None,
        "widgets": samples[0]["widgets"],
        "cls": max(s["cls"] for s in samples),
        "long_tasks": max(len(s["longTasks"]) for s in samples),
        "long_task_max_ms": max((d for s in samples for _, d in s["longTasks"]), default=0.0),
    }


PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 1, "cpu_slowdown": 4, "after_load_ms": 5000}
PHONE_BUDGETS = {"tbt_ms": 200, "long_task_max_ms": 150, "lcp_ms": 2500, "cls": 0.0, "first_view_kb": 300}

# Installed before any page script (so the HTML parser's own tasks are seen): long tasks, LCP and layout shifts.
PHONE_INIT_SCRIPT = """
window.__phone = {cls: 0, longTasks: [], lcp: null};
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (!e.hadRecentInput) __phone.cls += e.value;
  })
    .observe({type: 'layout-shift', buffered: true});
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) __phone.longTasks.push([e.startTime, e.duration]);
  })
    .observe({type: 'longtask', buffered: true});
  new PerformanceObserver((list) => { for (const e of list.getEntries()) __phone.lcp = e.startTime; })
    .observe({type: 'largest-contentful-paint', buffered: true});
} catch (e) {}
"""


def phone_pages(site: Path) -> list[str]:
    """Every page of the course as its author wrote it (content/*.md), so pages added later are measured too."""
    names = sorted(f"{md.stem}.html" for md in (ROOT / "content").glob("*.md"))
    return [n for n in names if (site / n).is_file()]


TRACE_CATEGORIES = ["toplevel", "devtools.timeline", "loading"]


def main_thread_tasks(trace: bytes, url: str) -> tuple[list[tuple[float, float, float]], float | None]:
    """The page's main-thread tasks from a Chromium trace, as (start, duration, thread CPU time) in ms from the
    first task, and the load event's time on the same clock.  Every top-level task counts — parsing, style, layout
    and paint included (the Long Tasks API does not report the rendering steps, which are most of the work here)."""
    events = json.loads(trace)["traceEvents"]
    pid = next(
        (
            e["pid"]
            for e in events
            if e.get("name") == "ParseHTML"
            and e.get("args", {}).get("beginData", {}).get("url", "").split("#")[0] == url
        ),
        None,
    )
    if pid is None:
        return [], None
    tid = next(
        e["tid"]
        for e in events
        if e.get("name") == "thread_name" and e["pid"] == pid and e["args"].get("name") == "CrRendererMain"
    )
    # the top-level task event is "RunTask" in older Chromium, "ThreadControllerImpl::RunTask" in newer ones
    nested = sorted(
        (e["ts"] / 1000, e["dur"] / 1000, e.get("tdur", e["dur"]) / 1000)
        for e in events
        if e["pid"] == pid
        and e["tid"] == tid
        and e.get("ph") == "X"
        and e.get("name") in ("RunTask", "ThreadControllerImpl::RunTask")
    )
    tasks: list[tuple[float, float, float]] = []
    for start, dur, cpu in nested:  # keep the outermost ones (a nested run loop runs tasks inside a task)
        if tasks and start < tasks[-1][0] + tasks[-1][1]:
            continue
        tasks.append((start, dur, cpu))
    # from the navigation: the task that starts parsing this page's HTML (the renderer's own start-up before it
    # is not the page's)
    parse = min(
        e["ts"] / 1000
        for e in events
        if e.get("name") == "ParseHTML"
        and e["pid"] == pid
        and e.get("args", {}).get("beginData", {}).get("url", "").split("#")[0] == url
    )
    tasks = [t for t in tasks if t[0] + t[1] > parse]
    loads = sorted(
        e["ts"] / 1000 for e in events if e["pid"] == pid and e.get("name") == "MarkLoad" and e["ts"] / 1000 > parse
    )
    if not tasks:
        return [], None
    t0 = tasks[0][0]
    return [(s - t0, d, c) for s, d, c in tasks], (loads[0] - t0 if loads else None)


def measure_phone(browser, url: str, site: Path) -> dict:
    context = browser.new_context(
        viewport=PHONE["viewport"],
        device_scale_factor=PHONE["device_scale_factor"],
        is_mobile=True,
        has_touch=True,
        locale="zh-CN",
        service_workers="block",
    )
    page = context.new_page()
    page.add_init_script(PHONE_INIT_SCRIPT)
    requests: list[tuple[str, str]] = []
    # context-level: requests made by workers count too (anything loaded without a click is first view)
    context.on("requestfinished", lambda request: requests.append((request.url, request.resource_type)))
    cdp = context.new_cdp_session(page)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": PHONE["cpu_slowdown"]})
    browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
    page.goto(url, wait_until="load")
    page.wait_for_timeout(PHONE["after_load_ms"])
    m = page.evaluate(
        """(after) => {
      const nav = performance.getEntriesByType('navigation')[0];
      const end = nav.loadEventEnd + after;
      const tasks = window.__phone.longTasks.filter(([s]) => s < end);
      return {load: nav.loadEventEnd, dcl: nav.domContentLoadedEventStart,
              lcp: window.__phone.lcp, cls: window.__phone.cls,
              api_tbt: tasks.reduce((sum, [, d]) => sum + Math.max(0, d - 50), 0),
              api_longest: tasks.reduce((max, [, d]) => Math.max(max, d), 0),
              dom: document.getElementsByTagName('*').length};
    }""",
        PHONE["after_load_ms"],
    )
    trace = browser.stop_tracing()
    tasks, load = main_thread_tasks(trace, url)
    end = (load if load is not None else max((t[0] for t in tasks), default=0)) + PHONE["after_load_ms"]
    window = [t for t in tasks if t[0] < end]
    long_tasks = [d for _, d, _ in window if d > 50]
    m["tbt"] = sum(d - 50 for d in long_tasks)
    m["longest"] = max((d for _, d, _ in window), default=0.0)
    m["tasks"] = len(long_tasks)
    # The same from the main thread's own CPU time (the slowdown included: Chromium's throttling keeps the
    # thread busy), which leaves out the time the thread waited for one of the shared cores — steadier on a
    # loaded machine; the wall times above are what the reader would wait.
    m["cpu_tbt"] = sum(max(0.0, c - 50) for _, _, c in window)
    m["cpu_longest"] = max((c for _, _, c in window), default=0.0)
    traffic = Traffic(page, site)
    traffic.items = requests
    m["bytes"] = traffic.summary()
    context.close()
    return m


def median_phone(browser, url: str, runs: int, site: Path) -> dict:
    samples = [measure_phone(browser, url, site) for _ in range(runs)]
    med = statistics.median
    by_kind = samples[0]["bytes"]
    first_view = sum(v["raw"] for k, v in by_kind.items() if k != "font")
    return {
        "tbt_ms": med(s["tbt"] for s in samples),
        "long_task_max_ms": med(s["longest"] for s in samples),
        "long_task_max_ms_worst": max(s["longest"] for s in samples),
        "lcp_ms": med(s["lcp"] or 0 for s in samples),
        "cls": max(s["cls"] for s in samples),
        "dom_elements": samples[0]["dom"],
        "load_ms": med(s["load"] for s in samples),
        "first_view_raw": first_view,
        "fonts_raw": by_kind.get("font", {}).get("raw", 0),
        "bytes": by_kind,
        "cpu_tbt_ms": med(s["cpu_tbt"] for s in samples),
        "cpu_longest_ms": med(s["cpu_longest"] for s in samples),
        "samples": [
            {
                k: s[k]
                for k in (
                    "tbt",
                    "longest",
                    "cpu_tbt",
                    "cpu_longest",
                    "lcp",
                    "cls",
                    "tasks",
                    "load",
                    "api_tbt",
                    "api_longest",
                )
            }
            for s in samples
        ],
    }


def phone_table(report: dict) -> str:
    lines = [
        "| page | TBT ms | longest task ms (worst) | CPU-time TBT / longest ms | LCP ms | CLS (max) | DOM elements "
        "| first view KiB raw (HTML+CSS+JS+Python, no fonts) | fonts KiB |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, m in report["pages"].items():
        lines.append(
            f"| {name} | {m['tbt_ms']:.0f} | {m['long_task_max_ms']:.0f} ({m['long_task_max_ms_worst']:.0f}) | "
            f"{m['cpu_tbt_ms']:.0f} / {m['cpu_longest_ms']:.0f} | "
            f"{m['lcp_ms']:.0f} | {m['cls']:.4f} | {m['dom_elements']} | "
            f"{kb(m['first_view_raw'])} | {kb(m['fonts_raw'])} |"
        )
    return "\n".join(lines)


def kb(n: int) -> str:
    return f"{n / 1024:.1f}"


def first_view(bytes_: dict) -> tuple[int, int]:
    keys = [k for k in bytes_ if k != "python"]
    return sum(bytes_[k]["raw"] for k in keys), sum(bytes_[k]["gzip"] for k in keys)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-build", action="store_true", help="measure an existing --site instead of building")
    ap.add_argument("--site", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "site_bench.json")
    ap.add_argument(
        "--python-profile",
        choices=("disk", "incognito"),
        default="disk",
        help="browser profile for the Python measurements (see python_context)",
    )
    ap.add_argument("--python-only", action="store_true", help="skip the page-load measurements")
    ap.add_argument("--pages-only", action="store_true", help="skip the Python measurements")
    ap.add_argument("--figure-only", action="store_true", help="only click → first matplotlib figure (http)")
    ap.add_argument("--phone", action="store_true", help="the phone profile (4x CPU slowdown, 390x844) instead")
    ap.add_argument("--page", action="append", default=None, help="with --phone: only this page (repeatable)")
    ap.add_argument(
        "--python-phone",
        action="store_true",
        help="also measure the Python cells under the phone profile (390×844, CPU 4× slower)",
    )
    args = ap.parse_args()
    if args.phone and args.out == ap.get_default("out"):
        args.out = ROOT / "bench" / "out" / "site_bench_phone.json"

    from playwright.sync_api import sync_playwright

    tmp = None
    if args.no_build and args.site:
        site = args.site.resolve()
    else:
        from builder.model import BuildOptions
        from builder.pipeline import build_site

        tmp = Path(tempfile.mkdtemp(prefix="site-bench-"))
        site = tmp / "site"
        started = time.perf_counter()
        build_site(BuildOptions.with_defaults(out_dir=site))
        print(f"built {site} in {time.perf_counter() - started:.2f} s", file=sys.stderr)
    pages = sorted(p.name for p in site.glob("*.html") if p.name != "404.html")  # 404: a page of its own, no search
    # the page bench/engines_bench.py measures in Firefox and WebKit, else the first with code cells
    with_cells = [p for p in pages if 'class="code-cell"' in (site / p).read_text(encoding="utf-8")]
    cell_page = "module-05-attention.html" if "module-05-attention.html" in with_cells else next(iter(with_cells), None)

    server = serve(site)
    if args.phone:
        return run_phone(args, site, server, tmp)
    bases = {"http": f"http://127.0.0.1:{server.server_address[1]}/", "file": site.as_uri() + "/"}
    report: dict = {
        "runs": args.runs,
        "budgets": BUDGETS,
        "pages": {},
        "python": {},
        "machine": {"cores": os.cpu_count(), "loadavg_start": os.getloadavg()},
        "python_profile": args.python_profile,
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    with sync_playwright() as p:
        exe = chromium_executable()
        browser = (
            p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS) if exe else p.chromium.launch(args=CHROMIUM_ARGS)
        )
        fig = figure_cell(site)
        if fig and not args.pages_only:
            report["figure"] = {
                "page": fig[0],
                "cell": fig[1],
                **measure_figure(
                    lambda: python_context(p, browser, args.python_profile), bases["http"] + fig[0], fig[1], args.runs
                ),
            }
        if args.figure_only:
            args.python_only = True
            cell_page = None
        if not args.python_only:
            report["search"] = measure_search(browser, bases["http"] + pages[0], site)
        for name in [] if args.python_only else pages:
            for scheme, base in bases.items():
                report["pages"].setdefault(name, {})[scheme] = median_load(browser, base + name, args.runs, site)
        if cell_page and not args.pages_only:
            for scheme, base in bases.items():
                report["python"][scheme] = measure_python(
                    lambda: python_context(p, browser, args.python_profile), base + cell_page, args.runs, site
                )
            report["python"]["page"] = cell_page
            if args.python_phone:
                report["python_phone"] = {
                    scheme: measure_python_phone(p, base + cell_page, args.runs) for scheme, base in bases.items()
                }
        browser.close()
    server.shutdown()
    report["machine"]["loadavg_end"] = os.getloadavg()
    report["weight"] = offline_weight(site)

    lines = [
        "| page | via | first view KB raw / gzip (excl. Pyodide) | fonts KB | DCL ms | widget ready ms after DCL "
        "| CLS | long tasks (max ms) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, by in report["pages"].items():
        for scheme, m in by.items():
            raw, gz = first_view(m["bytes"])
            font = m["bytes"].get("font", {}).get("raw", 0)
            ready = "—" if m["widget_ready_ms"] is None else f"{m['widget_ready_ms']:.1f}"
            lines.append(
                f"| {name} | {scheme} | {kb(raw)} / {kb(gz)} | {kb(font)} | {m['dcl_ms']:.0f} | {ready} | "
                f"{m['cls']:.4f} | {m['long_tasks']} ({m['long_task_max_ms']:.0f}) |"
            )
    if report.get("search"):
        s = report["search"]
        lines += [
            "",
            f"search (index {kb(s['index_bytes'])} KB), median ms of 20 calls: "
            + ", ".join(f"{q} {ms:.2f}" for q, ms in s["median_ms"].items()),
        ]
    if report["python"]:
        load = report["machine"]
        lines += [
            "",
            f"Python cells ({report['python']['page']}), medians of {args.runs}, {report['python_profile']} "
            f"profile, load avg {load['loadavg_start'][0]:.1f} → {load['loadavg_end'][0]:.1f}:",
            "",
            "| via | bytes on first Run (raw / gzip) | click → first output cold | warm | longest task while loading "
            "| 停止 → ready | 停止 → print(1+1) |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for scheme in ("http", "file"):
            m = report["python"][scheme]
            b = m["first_run_bytes"]
            lines.append(
                f"| {scheme} | {b['raw'] / 1e6:.1f} MB / {b['gzip'] / 1e6:.1f} MB | {m['cold_ms'] / 1000:.2f} s | "
                f"{m['warm_ms'] / 1000:.2f} s | {m['long_task_max_ms']:.0f} ms | {m['stop_ready_ms']:.0f} ms | "
                f"{m['stop_to_output_ms']:.0f} ms |"
            )
    if report.get("figure"):
        f = report["figure"]
        lines += [
            "",
            f"matplotlib ({f['page']}, cell {f['cell']}, http), medians of {args.runs}: extra bytes "
            f"{f['matplotlib_bytes'] / 1e6:.2f} MB; click → first figure cold {f['cold_ms'] / 1000:.2f} s "
            f"(budget {BUDGETS['first_figure_cold_s']} s), warm {f['warm_ms'] / 1000:.2f} s "
            f"(budget {BUDGETS['first_figure_warm_s']} s)",
        ]
        for kind in ("cold", "warm"):
            ph = f["phases_ms"][kind]
            lines.append(
                f"  {kind}, ms after the click: "
                + ", ".join(
                    f"{name} {ph[key]:.0f}"
                    for key, name in (
                        ("ready", "Python ready"),
                        ("packs", "packages loaded"),
                        ("cell", "cell done"),
                    )
                    if ph[key] is not None
                )
            )
    if report.get("python_phone"):
        lines += [
            "",
            f"Python cells under the phone profile ({PHONE_VIEWPORT['width']}×{PHONE_VIEWPORT['height']}, "
            f"CPU {PHONE_CPU_SLOWDOWN}× slower), medians of {args.runs}:",
            "",
            "| via | click → first output cold | warm |",
            "| --- | --- | --- |",
        ]
        for scheme, m in report["python_phone"].items():
            lines.append(f"| {scheme} | {m['cold_ms'] / 1000:.2f} s | {m['warm_ms'] / 1000:.2f} s |")
    w = report["weight"]
    lines += [
        "",
        "| offline weight | MB |",
        "| --- | --- |",
        f"| site/ | {w['site_bytes'] / 1e6:.1f} |",
        f"| site/assets/python/ | {w['python_bytes'] / 1e6:.1f} |",
        f"| offline package (make zip) | {w['zip_bytes'] / 1e6:.1f} |",
    ]
    table = "\n".join(lines)
    print(table)
    report["table"] = table
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    print(f"\nJSON: {args.out}", file=sys.stderr)
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def run_phone(args, site: Path, server, tmp) -> int:
    from playwright.sync_api import sync_playwright

    base = f"http://127.0.0.1:{server.server_address[1]}/"
    report: dict = {
        "runs": args.runs,
        "profile": PHONE,
        "budgets": PHONE_BUDGETS,
        "pages": {},
        "machine": {"cores": os.cpu_count(), "loadavg_start": os.getloadavg()},
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    with sync_playwright() as p:
        exe = chromium_executable()
        browser = (
            p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS) if exe else p.chromium.launch(args=CHROMIUM_ARGS)
        )
        for name in args.page or phone_pages(site):
            report["pages"][name] = median_phone(browser, base + name, args.runs, site)
            print(f"{name}: done", file=sys.stderr)
        browser.close()
    server.shutdown()
    report["machine"]["loadavg_end"] = os.getloadavg()
    load = report["machine"]
    table = (
        f"Phone profile, medians of {args.runs}, load avg {load['loadavg_start'][0]:.1f} → "
        f"{load['loadavg_end'][0]:.1f}:\n\n" + phone_table(report)
    )
    print(table)
    report["table"] = table
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    print(f"\nJSON: {args.out}", file=sys.stderr)
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
