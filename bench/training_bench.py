#!/usr/bin/env python3
r"""Training in the browser: module 08's cells (module-08-build-transformer.html) in Chromium (Playwright), Firefox
and WebKit (WebDriver), over http and file://. Run by hand, never part of `make test`.

Each round opens every engine × transport in a fresh browser (cold: nothing cached, an empty profile), puts the six
exercises in the course progress as passed with their reference solutions (localStorage, written from the site's
404 page of the same origin, so the course page's first visit is still cold), opens the page and clicks, in order:

* `autograd-first`, the page's first cell — `python_start_s`: click → its output shown (Python starts, NumPy is
  imported);
* `assemble` — `assemble_s`: click → its output shown (the six exercises' passing code is handed to the page, the
  cell runs); `python_ready_s` is the sum of the two;
* `train-induction` (300 steps) — `induction_first_point_s` (click → the live curve mounted, `data-ready`),
  `induction_threshold_s` (click → 「归纳头出现了」 printed) and the step that line names, `induction_done_s`
  (click → 「完成」), `induction_steps_per_s` (from the curve's status line 「第 N 步」 while it runs);
* `poem-data`, `poem-model` (each run to 「完成」: `poem_data_s`, `poem_model_s`), then `train-poems` (400 steps) —
  `poem_first_point_s` (click → the curve mounted); `--poem-seconds` later the step in the curve's status line
  (`poem_step`) and `poem_steps_per_s` (steps per second between the first and the last status seen); then 停止:
  `stop_s` (click → 「已停止」) and `kept` (the cell's notice says 「没有重启」: the namespace survived).

Times are taken in the page (performance.now() at the click, a MutationObserver on the cell), so polling from here
adds nothing. A cell that fails, a curve that cannot mount or an error thrown in the page is reported with the run.
Also a CPU probe per run: a fixed JavaScript loop on the page's main thread and in a Web Worker (ms), which shows
whether the phone profile's throttling reaches the worker where Python runs.

--phone: Chromium only, as a phone (390×844, mobile, touch) with the CPU slowed 4×: CDP's
Emulation.setCPUThrottlingRate {rate: 4} on the page (as bench/site_bench.py's phone profile) slows its main thread
only — Python runs in a Web Worker, which it does not reach (Chromium 156 answers the same command on a worker's own
target with "Operation is only supported for pages, not workers") — so, where this runs as root on Linux with the
cgroup-v1 `cpu` controller, every process of that Chromium is put instead in a cgroup limited to a quarter of one core
(`cpu.cfs_quota_us` 25,000 of 100,000), which slows its worker as well; the CPU probe's row shows what each thread
got (a thread alone gets a quarter core; the main thread and the worker busy at once share it).

Prints a table (medians, min–max) with the load average at the start and end of each round and the machine's cores,
and writes every sample to --json.

    xvfb-run -a .venv/bin/python bench/training_bench.py --runs 3 [--site site] \
        [--engines chromium firefox webkit] [--transports http file] [--poem-seconds 20] [--timeout 600]
    .venv/bin/python bench/training_bench.py --phone --engines chromium --runs 3

WebKit needs a display: run it under `xvfb-run -a` (tests/engines/conftest.py starts its own Xvfb instead).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CHROMIUM_ARGS, chromium_executable, exercise_solutions, serve  # noqa: E402
from tests.engines.conftest import _firefox, _webkit  # noqa: E402

PAGE = "module-08-build-transformer.html"
SLUG = "module-08-build-transformer"
FIRST_CELL = "autograd-first"  # imports numpy as np, which `assemble` uses
SEED_PAGE = "404.html"  # same origin, no code cells: writing the progress there loads nothing of Python
EXERCISES = ("softmax-backward", "embed", "causal-attention", "feed-forward", "norm-residual", "cross-entropy")
PROGRESS_KEY = "attention-course:progress"  # theme/js/site/progress.js
PHONE_VIEWPORT = {"width": 390, "height": 844}
PHONE_CPU_SLOWDOWN = 4
DESKTOP_VIEWPORT = {"width": 1280, "height": 900}

# (key, label in the table, digits); times are seconds after the click on the cell
METRICS = (
    ("python_start_s", "autograd-first: click → output, s", 2),
    ("assemble_s", "assemble: click → output, s", 2),
    ("python_ready_s", "Python ready (the two), s", 2),
    ("induction_first_point_s", "train-induction: first point, s", 2),
    ("induction_threshold_s", "… 「归纳头出现了」, s", 1),
    ("induction_threshold_step", "… at step", 0),
    ("induction_done_s", "… 300 steps done, s", 1),
    ("induction_steps_per_s", "… steps/s", 1),
    ("poem_data_s", "poem-data: done, s", 2),
    ("poem_model_s", "poem-model: done, s", 2),
    ("poem_first_point_s", "train-poems: first point, s", 2),
    ("poem_step", "… step after --poem-seconds", 0),
    ("poem_steps_per_s", "… steps/s", 2),
    ("stop_s", "… 停止 → 「已停止」, s", 2),
)

# Installs a recorder on the cell `#cell-<id>` (times in ms after the click, from a MutationObserver) and clicks its
# 运行 as soon as the button is usable. The first call on a page also starts collecting the page's errors.
WATCH_AND_RUN = """async (id) => {
  const cell = document.getElementById('cell-' + id);
  if (!cell) return {error: 'no #cell-' + id + ' on the page'};
  if (!window.__tbErrors) {
    const errors = window.__tbErrors = [];
    addEventListener('error', (e) => errors.push('error: ' + (e.message || e.type)));
    addEventListener('unhandledrejection', (e) => {
      errors.push('unhandled rejection: ' + String(e.reason && (e.reason.stack || e.reason)));
    });
    const original = console.error;
    console.error = function (...args) {
      errors.push('console.error: ' + args.map(String).join(' '));
      return original.apply(this, args);
    };
  }
  cell.scrollIntoView({block: 'center'});
  const rec = {events: {}, steps: [], statuses: [], status: null, curve: null, line: null, notice: null, error: null};
  (window.__tb = window.__tb || {})[id] = rec;
  const text = (el) => (el && el.textContent) || '';
  let t0 = 0;
  const now = () => performance.now() - t0;
  const at = (name) => { if (rec.events[name] == null) rec.events[name] = now(); };
  const look = () => {
    const output = cell.querySelector('.cell-output');
    const log = text(cell.querySelector('.cell-log'));
    const status = text(cell.querySelector('.cell-status'));
    if (output && output.dataset.origin === 'browser' && log.trim()) at('output');
    const curve = cell.querySelector('.cell-widget[data-widget="training-curve"]');
    if (curve && curve.dataset.ready === 'true') {
      at('first_point');
      rec.curve = text(curve.querySelector('.tc-status'));
      const m = /第\\s*(\\d+)\\s*步/.exec(rec.curve);
      const last = rec.steps[rec.steps.length - 1];
      if (m && (!last || last[1] !== Number(m[1]))) rec.steps.push([now(), Number(m[1])]);
    } else if (curve && /无法显示/.test(text(curve))) {
      at('error'); rec.error = rec.error || text(curve);
    }
    const line = log.split('\\n').find((l) => l.includes('归纳头出现了'));
    if (line && rec.line === null) { rec.line = line; at('threshold'); }
    if (status !== rec.status) { rec.status = status; rec.statuses.push([now(), status]); }
    if (/^完成/.test(status) && !cell.hasAttribute('data-running')) at('done');
    else if (/出错|无法/.test(status)) { at('error'); rec.error = rec.error || status + '\\n' + log.slice(-2000); }
    else if (status === '已停止') at('stopped');
    const notice = cell.querySelector('.cell-notice');
    if (notice && !notice.hidden && notice.textContent) rec.notice = notice.textContent;
  };
  new MutationObserver(look).observe(cell, {subtree: true, childList: true, characterData: true, attributes: true});
  const button = cell.querySelector('[data-action="run"]');
  for (let i = 0; button.disabled && i < 600; i++) await new Promise((r) => setTimeout(r, 50));
  if (button.disabled) return {error: 'its 运行 button stayed disabled for 30 s'};
  t0 = rec.t0 = performance.now();
  button.click();
  look();
  return {clicked: true};
}"""

# 停止 on the cell (its time on the recorder's clock goes in the record); false if the button is not there.
CLICK_STOP = """(id) => {
  const cell = document.getElementById('cell-' + id);
  const rec = window.__tb[id];
  const button = cell.querySelector('[data-action="stop"]');
  if (button.hidden || button.disabled) return false;
  rec.events.stop_click = performance.now() - rec.t0;
  button.click();
  return true;
}"""

# The recorder of a cell (a copy).
READ = """(id) => {
  const rec = (window.__tb || {})[id];
  return rec ? {...rec} : null;
}"""

# Every watched cell's last status, and the errors the page has shown since the first WATCH_AND_RUN.
SEEN = """() => ({
  statuses: Object.fromEntries(Object.entries(window.__tb || {}).map(([id, rec]) => [id, rec.status])),
  errors: window.__tbErrors || [],
})"""

# Writes the course progress (theme/js/site/progress.js) on the page's origin; true if it reads back the same.
SEED = """([key, value]) => {
  localStorage.setItem(key, value);
  return localStorage.getItem(key) === value;
}"""

# The same fixed loop on the page's main thread and in a blob: Web Worker (where the Python runtime runs), ms each.
CPU_PROBE = """async () => {
  const spin = () => { let x = 0; for (let i = 0; i < 2e7; i++) x = (x + i * 7) % 1000003; return x; };
  const t0 = performance.now(); spin(); const main = performance.now() - t0;
  const code = `onmessage = () => { const t0 = performance.now(); let x = 0;
    for (let i = 0; i < 2e7; i++) x = (x + i * 7) % 1000003; postMessage([performance.now() - t0, x]); };`;
  const url = URL.createObjectURL(new Blob([code], {type: 'text/javascript'}));
  const worker = new Worker(url);
  try {
    const [ms] = await new Promise((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(e.message || 'worker error'));
      worker.postMessage(0);
    });
    return {main_ms: main, worker_ms: ms};
  } finally { worker.terminate(); URL.revokeObjectURL(url); }
}"""


class CellFailed(Exception):
    """A cell that ended in an error, or did not get where it was waited for in time."""


def solutions(site: Path) -> dict[str, str]:
    """Each exercise's reference solution, as the page loads it (the exercise's data script)."""
    return {ex: code + "\n" for ex, code in exercise_solutions(site, PAGE).items()}


def progress_json(codes: dict[str, str]) -> str:
    """The course progress with every exercise passed by `codes` (cells/exercise.js `passedCode` reads `code`)."""
    record = {
        ex: {"passed": True, "attempts": 1, "failures": 0, "hints": 0, "code": code} for ex, code in codes.items()
    }
    return json.dumps({"v": 1, "pages": {SLUG: {"exercises": record}}}, ensure_ascii=False)


class QuarterCore:
    """Every process of one Chromium (the browser whose command line names `marker`, and all it starts) in a cgroup
    limited to a quarter of one core — a CPU 4× slower for the page's worker too. A thread adds the new processes
    (renderers, the GPU process) as they appear."""

    ROOT = Path("/sys/fs/cgroup/cpu")

    def __init__(self, marker: str):
        import threading

        self.group = self.ROOT / f"training-bench-{os.getpid()}"
        self.group.mkdir(exist_ok=True)
        (self.group / "cpu.cfs_period_us").write_text("100000")
        (self.group / "cpu.cfs_quota_us").write_text(str(100000 // PHONE_CPU_SLOWDOWN))
        self.marker = marker
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self._sync()
        self.thread.start()

    @classmethod
    def available(cls) -> bool:
        return (cls.ROOT / "cgroup.procs").is_file() and os.access(cls.ROOT, os.W_OK)

    def _sync(self) -> None:
        parents: dict[int, int] = {}
        roots = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            if self.marker.encode() in cmdline:
                roots.append(int(entry.name))
        family = set(roots)
        grew = True
        while grew:
            more = {pid for pid, parent in parents.items() if parent in family} - family
            family |= more
            grew = bool(more)
        for pid in family:
            try:
                (self.group / "cgroup.procs").write_text(str(pid))
            except OSError:
                pass

    def _follow(self) -> None:
        while not self.stop.wait(0.1):
            self._sync()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        for pid in (self.group / "cgroup.procs").read_text().split():
            try:
                (self.ROOT / "cgroup.procs").write_text(pid)
            except OSError:
                pass
        try:
            self.group.rmdir()
        except OSError:
            pass


class ChromiumSession:
    """A fresh Chromium (Playwright, a new on-disk profile: cold) with one page; `phone`: 390×844, mobile, touch,
    CPU slowed 4× on the page (CDP, set before the first navigation)."""

    def __init__(self, playwright, phone: bool, timeout_s: float):
        self.user_dir = tempfile.mkdtemp(prefix="training-bench-")
        exe = chromium_executable()
        profile = (
            {"viewport": PHONE_VIEWPORT, "is_mobile": True, "has_touch": True}
            if phone
            else {"viewport": DESKTOP_VIEWPORT}
        )
        self.context = playwright.chromium.launch_persistent_context(
            self.user_dir,
            **({"executable_path": exe} if exe else {}),
            args=CHROMIUM_ARGS,
            locale="zh-CN",
            service_workers="block",
            **profile,
        )
        self.page = self.context.pages[0] if self.context.pages else self.context.new_page()
        self.page.set_default_timeout(timeout_s * 1000)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda err: self.errors.append(f"pageerror: {err}"))
        self.page.on("console", lambda msg: msg.type == "error" and self.errors.append(f"console: {msg.text}"))
        self.quota = None
        if phone and QuarterCore.available():  # every thread of this Chromium slowed, its worker too
            self.quota = QuarterCore(self.user_dir)
        elif phone:  # only the page's main thread can be slowed
            cdp = self.context.new_cdp_session(self.page)
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": PHONE_CPU_SLOWDOWN})
        self.version = self.context.browser.version if self.context.browser else None

    def goto(self, url: str) -> None:
        self.page.goto(url, wait_until="load")

    def js(self, fn: str, arg=None):
        return self.page.evaluate(fn, arg)

    def close(self) -> None:
        self.context.close()
        if self.quota is not None:
            self.quota.close()
        shutil.rmtree(self.user_dir, ignore_errors=True)


class WebDriverSession:
    """A fresh Firefox ESR or WebKitGTK MiniBrowser (Selenium, as tests/engines/conftest.py starts them) with its
    window at 1280×900."""

    CALL = """const arg = arguments[0], done = arguments[arguments.length - 1];
Promise.resolve().then(() => (%s)(arg)).then(done, (e) => done({error: 'script: ' + String(e)}));"""

    PAGE_LOAD_S, SCRIPT_S = 120, 60
    HTTP_S = 180  # any one WebDriver command (a MiniBrowser that never comes up once hung a new session for good)

    def __init__(self, engine: str):
        for attempt in (1, 2):
            # Selenium's client takes its HTTP timeout from the socket default when the driver is made
            previous = socket.getdefaulttimeout()
            socket.setdefaulttimeout(self.HTTP_S)
            try:
                self.driver = _firefox() if engine == "firefox" else _webkit(os.environ.get("DISPLAY", ":0"))
                break
            except Exception as err:
                if attempt == 2:
                    raise
                print(f"{engine} did not start ({type(err).__name__}: {err}); once more", file=sys.stderr)
            finally:
                socket.setdefaulttimeout(previous)
        self.driver.set_window_size(DESKTOP_VIEWPORT["width"], DESKTOP_VIEWPORT["height"])
        self.driver.set_script_timeout(self.SCRIPT_S)
        self.driver.set_page_load_timeout(self.PAGE_LOAD_S)
        self.errors: list[str] = []  # WebDriver has no console: the page's own errors come with SEEN
        self.version = self.driver.capabilities.get("browserVersion")

    def goto(self, url: str) -> None:
        self.driver.get(url)
        for _ in range(600):
            if self.driver.execute_script("return document.readyState") == "complete":
                return
            time.sleep(0.05)
        raise CellFailed(f"{url} did not finish loading")

    def js(self, fn: str, arg=None):
        return self.driver.execute_async_script(self.CALL % fn, arg)

    def close(self) -> None:
        self.driver.quit()


def wait(session, cell: str, until, timeout_s: float, poll_s: float = 0.25) -> dict:
    """Poll the cell's recorder until `until(rec)`; a cell error (or the timeout) raises CellFailed."""
    end = time.monotonic() + timeout_s
    while True:
        rec = session.js(READ, cell)
        if rec and until(rec):
            return rec
        if rec and "error" in rec["events"]:
            raise CellFailed(f"{cell}: {rec['error']}")
        if time.monotonic() > end:
            status = rec and rec["status"]
            raise CellFailed(f"{cell}: not there after {timeout_s:g} s (status {status!r})")
        time.sleep(poll_s)


def run_cell(session, cell: str, event: str, timeout_s: float) -> dict:
    """Click 运行 on `#cell-<cell>` and wait for its `event` (output, first_point, done, …)."""
    started = session.js(WATCH_AND_RUN, cell)
    if not started or "error" in started:
        raise CellFailed(f"{cell}: {started}")
    return wait(session, cell, lambda rec: event in rec["events"], timeout_s)


def seconds(rec: dict, event: str, since: str | None = None) -> float | None:
    events = rec["events"]
    if events.get(event) is None:
        return None
    return (events[event] - (events[since] if since else 0)) / 1000


def steps_per_s(rec: dict, until_ms: float | None = None) -> tuple[int | None, float | None]:
    """The last step the curve's status line showed (by `until_ms`) and the rate between its first and last."""
    steps = [(t, s) for t, s in rec["steps"] if until_ms is None or t <= until_ms]
    if len(steps) < 2:
        return (steps[-1][1] if steps else None), None
    (t0, s0), (t1, s1) = steps[0], steps[-1]
    return s1, (s1 - s0) / ((t1 - t0) / 1000) if t1 > t0 else None


def measure(session, base: str, progress: str, poem_seconds: float, timeout_s: float) -> dict:
    """One visit of the page in a fresh browser: the cells in order, as the module docstring says."""
    out: dict = {"version": session.version}
    stage = "the progress written"  # where a browser that gives up gave up
    try:
        session.goto(base + SEED_PAGE)
        if not session.js(SEED, [PROGRESS_KEY, progress]):
            raise CellFailed(f"{base}{SEED_PAGE}: localStorage did not keep the progress")
        stage = "the page opened"
        session.goto(base + PAGE)
        stage = "Python started"
        # `assemble` uses the `np` the page's first cell imports (the exercises hand over their functions only)
        rec = run_cell(session, FIRST_CELL, "done", timeout_s)
        out["python_start_s"] = seconds(rec, "output")
        rec = run_cell(session, "assemble", "done", timeout_s)
        out["assemble_s"] = seconds(rec, "output")
        out["python_ready_s"] = out["python_start_s"] + out["assemble_s"]

        stage = "the induction training"
        rec = run_cell(session, "train-induction", "done", timeout_s)
        out["induction_first_point_s"] = seconds(rec, "first_point")
        out["induction_threshold_s"] = seconds(rec, "threshold")
        m = re.search(r"第\s*(\d+)\s*步", rec["line"] or "")
        out["induction_threshold_step"] = int(m.group(1)) if m else None
        out["induction_line"] = rec["line"]
        out["induction_done_s"] = seconds(rec, "done")
        out["induction_steps_per_s"] = steps_per_s(rec)[1]

        stage = "the poems' data and model"
        out["poem_data_s"] = seconds(run_cell(session, "poem-data", "done", timeout_s), "done")
        out["poem_model_s"] = seconds(run_cell(session, "poem-model", "done", timeout_s), "done")

        stage = "the poems' training"
        rec = run_cell(session, "train-poems", "first_point", timeout_s)
        out["poem_first_point_s"] = seconds(rec, "first_point")
        time.sleep(poem_seconds)
        rec = session.js(READ, "train-poems")
        if "error" in rec["events"]:
            raise CellFailed(f"train-poems: {rec['error']}")
        if "done" in rec["events"]:
            raise CellFailed(f"train-poems: all 400 steps done within --poem-seconds {poem_seconds:g}: nothing to stop")
        out["poem_step"], out["poem_steps_per_s"] = steps_per_s(rec)
        out["poem_curve_status"] = rec["curve"]
        stage = "停止"
        if not session.js(CLICK_STOP, "train-poems"):
            raise CellFailed("train-poems: no 停止 button while it runs")
        rec = wait(session, "train-poems", lambda r: "stopped" in r["events"], timeout_s)
        out["stop_s"] = seconds(rec, "stopped", "stop_click")
        try:  # the notice comes with the page's own stop, right after the status
            rec = wait(session, "train-poems", lambda r: r["notice"], 10)
        except CellFailed:
            pass
        out["stop_notice"] = rec["notice"]
        out["kept"] = "没有重启" in (rec["notice"] or "")
        out["cpu_probe"] = session.js(CPU_PROBE)
    except CellFailed as err:
        out["failed"] = str(err)
    except Exception as err:  # the browser or its driver gave up: the other runs go on
        out["failed"] = f"{stage}: {type(err).__name__}: {err}"
    try:
        seen = session.js(SEEN)
        out["statuses"], out["page_errors"] = seen["statuses"], session.errors + seen["errors"]
    except Exception as err:
        out["statuses"], out["page_errors"] = {}, [*session.errors, f"(the page could not be read: {err})"]
    return out


def one_run(playwright, engine: str, phone: bool, base: str, progress: str, args) -> dict:
    """`measure` in a browser of its own, closed after it."""
    try:
        session = ChromiumSession(playwright, phone, args.timeout) if engine == "chromium" else WebDriverSession(engine)
    except Exception as err:
        return {"failed": f"{engine} did not start: {type(err).__name__}: {err}", "page_errors": []}
    try:
        return measure(session, base, progress, args.poem_seconds, args.timeout)
    finally:
        session.close()


def summarize(values: list) -> dict | None:
    numbers = [v for v in values if v is not None]
    if not numbers:
        return None
    return {"median": statistics.median(numbers), "min": min(numbers), "max": max(numbers), "n": len(numbers)}


def cell_text(stats: dict | None, digits: int, total: int) -> str:
    if stats is None:
        return "—"
    f = f"{{:.{digits}f}}"
    text = f.format(stats["median"])
    if stats["n"] > 1:
        text += f" ({f.format(stats['min'])}–{f.format(stats['max'])})"
    if stats["n"] < total:
        text += f" [{stats['n']}/{total}]"
    return text


def table(report: dict) -> str:
    keys = list(report["samples"])
    lines = [
        "| median (min–max) | " + " | ".join(keys) + " |",
        "| --- |" + " ---: |" * len(keys),
    ]
    for metric, label, digits in METRICS:
        row = [cell_text(report["summary"][k].get(metric), digits, len(report["samples"][k])) for k in keys]
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    kept = [
        f"{sum(1 for s in report['samples'][k] if s.get('kept'))}/"
        f"{sum(1 for s in report['samples'][k] if s.get('stop_s') is not None)}"
        for k in keys
    ]
    lines.append("| 停止 kept the namespace (没有重启) | " + " | ".join(kept) + " |")
    probe = []
    for k in keys:
        probes = [s["cpu_probe"] for s in report["samples"][k] if s.get("cpu_probe")]
        main = statistics.median(p["main_ms"] for p in probes) if probes else None
        worker = statistics.median(p["worker_ms"] for p in probes) if probes else None
        probe.append("—" if main is None else f"{main:.0f} / {worker:.0f}")
    lines.append("| CPU probe ms, main thread / worker | " + " | ".join(probe) + " |")
    rounds = "; ".join(
        f"{r['loadavg_start'][0]:.1f} → {r['loadavg_end'][0]:.1f} ({r['seconds'] / 60:.1f} min)"
        for r in report["rounds"]
    )
    head = (
        f"{PAGE}, {report['profile']}, --runs {report['runs']}, --poem-seconds {report['poem_seconds']:g}; "
        f"{report['machine']['cores']} cores; load avg (1 min) per round, start → end: {rounds}"
    )
    return head + "\n\n" + "\n".join(lines)


def problems(report: dict) -> list[str]:
    out = []
    for key, samples in report["samples"].items():
        for i, s in enumerate(samples):
            if s.get("failed"):
                out.append(f"{key}, run {i + 1}: {s['failed']}")
            if s.get("stop_s") is not None and not s.get("kept"):
                out.append(f"{key}, run {i + 1}: 停止 restarted Python: {s.get('stop_notice')!r}")
            for e in s.get("page_errors", []):
                out.append(f"{key}, run {i + 1}: page error: {e}")
    return out


PAGE_NUMBERS = ROOT / "attention_course" / "hands_on" / "browser_timings.json"
PAGE_METRICS = ("python_ready_s", "induction_threshold_s", "induction_done_s", "poem_first_point_s", "poem_steps_per_s")


def page_numbers(report: dict, path: Path = PAGE_NUMBERS) -> None:
    """The medians module 08 quotes (how long its trainings take), under this report's profile, with when and at
    which load they were measured: attention_course/hands_on/browser_timings.json (committed; reference_runs reads
    it). `--page-numbers` writes it from this run, `--page-numbers-from REPORT.json` from an earlier one."""
    kept = json.loads(path.read_text("utf-8")) if path.is_file() else {}
    profile = "phone" if report["profile"].startswith("phone") else "desktop"
    loads = [r["loadavg_start"][0] for r in report["rounds"]] + [r["loadavg_end"][0] for r in report["rounds"]]
    kept[profile] = {
        "measured": report["when"],
        "command": "bench/training_bench.py" + (" --phone --engines chromium" if profile == "phone" else ""),
        "profile": report["profile"],
        "runs": report["runs"],
        "cores": report["machine"]["cores"],
        "load_1min": [round(min(loads), 1), round(max(loads), 1)],
        "medians": {
            key: {m: round(v["median"], 2) for m, v in stats.items() if m in PAGE_METRICS and v}
            for key, stats in report["summary"].items()
        },
    }
    path.write_text(json.dumps(kept, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"page numbers: {path}", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", type=Path, default=ROOT / "site")
    ap.add_argument("--engines", nargs="+", choices=("chromium", "firefox", "webkit"), default=None)
    ap.add_argument("--transports", nargs="+", choices=("http", "file"), default=["http", "file"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--phone", action="store_true", help="Chromium as a phone: 390×844, mobile, CPU 4× slower")
    ap.add_argument("--poem-seconds", type=float, default=20, help="how long train-poems runs before 停止")
    ap.add_argument("--timeout", type=float, default=600, help="seconds to wait for any one thing (a cell done, …)")
    ap.add_argument("--json", type=Path, default=None, help="default bench/out/training_bench[_phone].json")
    ap.add_argument("--page-numbers", action="store_true", help=f"write the medians module 08 quotes: {PAGE_NUMBERS}")
    ap.add_argument("--page-numbers-from", type=Path, help="write them from an earlier report (its --json), then stop")
    args = ap.parse_args()
    if args.page_numbers_from:
        page_numbers(json.loads(args.page_numbers_from.read_text("utf-8")))
        return 0
    engines = args.engines or (["chromium"] if args.phone else ["chromium", "firefox", "webkit"])
    if args.phone and engines != ["chromium"]:
        ap.error("--phone is Chromium only (CDP CPU throttling): use --engines chromium")
    if "webkit" in engines and not os.environ.get("DISPLAY"):
        ap.error("WebKit needs a display: run under `xvfb-run -a`")
    json_path = args.json or ROOT / "bench" / "out" / f"training_bench{'_phone' if args.phone else ''}.json"
    site = args.site.resolve()
    progress = progress_json(solutions(site))

    size = PHONE_VIEWPORT if args.phone else DESKTOP_VIEWPORT
    profile = f"{'phone' if args.phone else 'desktop'} {size['width']}×{size['height']}"
    if args.phone:
        slowed = "every thread" if QuarterCore.available() else "main thread"
        profile += f", {slowed} {PHONE_CPU_SLOWDOWN}× slower"
    server = serve(site)
    bases = {"http": f"http://127.0.0.1:{server.server_address[1]}/", "file": site.as_uri() + "/"}
    report: dict = {
        "page": PAGE,
        "profile": profile,
        "runs": args.runs,
        "poem_seconds": args.poem_seconds,
        "machine": {"cores": os.cpu_count()},
        "when": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "rounds": [],
        "samples": {},
    }
    playwright = None
    if "chromium" in engines:
        from playwright.sync_api import sync_playwright

        playwright = sync_playwright().start()
    started = time.monotonic()
    try:
        for r in range(args.runs):
            round_ = {"loadavg_start": os.getloadavg()}
            t0 = time.monotonic()
            for engine in engines:
                for transport in args.transports:
                    key = f"{engine}{'-phone' if args.phone else ''} {transport}"
                    t1 = time.monotonic()
                    m = one_run(playwright, engine, args.phone, bases[transport], progress, args)
                    m["wall_s"] = time.monotonic() - t1
                    report["samples"].setdefault(key, []).append(m)
                    brief = ", ".join(f"{k} {m[k]:.2f}" for k, _, _ in METRICS if m.get(k) is not None)
                    print(f"round {r + 1}, {key}: {m.get('failed') or brief}", file=sys.stderr, flush=True)
            round_["loadavg_end"] = os.getloadavg()
            round_["seconds"] = time.monotonic() - t0
            report["rounds"].append(round_)
            print(
                f"round {r + 1}: load {round_['loadavg_start'][0]:.1f} → {round_['loadavg_end'][0]:.1f}",
                file=sys.stderr,
            )
    finally:
        if playwright:
            playwright.stop()
        server.shutdown()
    report["seconds"] = time.monotonic() - started
    report["summary"] = {
        key: {metric: summarize([s.get(metric) for s in samples]) for metric, _, _ in METRICS}
        for key, samples in report["samples"].items()
    }
    report["table"] = table(report)
    report["problems"] = problems(report)
    print(report["table"])
    if report["problems"]:
        print("\nWhat went wrong:\n" + "\n".join(f"- {p}" for p in report["problems"]))
    print(f"\ntook {report['seconds'] / 60:.1f} min", file=sys.stderr)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"JSON: {json_path}", file=sys.stderr)
    if args.page_numbers and not report["problems"]:
        page_numbers(report)
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
