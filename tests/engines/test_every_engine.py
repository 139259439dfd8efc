"""A reader's journeys in Firefox and WebKit: a page with its math and widgets, the search; on one visit over http
and one from disk, a code cell's first output, an exercise checked, Stop and what follows; a plot; the poem writer;
a narrow window; scrolling up past widgets that mount. (Chromium runs the whole e2e suite.)"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import exercise_solutions

PAGE = "module-05-attention.html"
PLOT_PAGE = "activation-function-explained.html"

# Clicks the run button of the first code cell and waits until the browser's own output is there.
RUN_FIRST_CELL = """
const done = arguments[arguments.length - 1];
const cell = document.querySelectorAll('.code-cell')[arguments[0]];
cell.scrollIntoView({block: 'center'});
const log = cell.querySelector('.cell-log');
let t0 = 0;
const finish = (result) => { clearInterval(timer); done({...result, ms: performance.now() - t0}); };
const timer = setInterval(() => {
  const out = cell.querySelector('.cell-output');
  const status = (cell.querySelector('.cell-status') || {}).textContent || '';
  const bar = (document.querySelector('.cells-bar-status') || {}).textContent || '';
  const img = cell.querySelector('img.cell-figure[src^="blob:"]');
  if (out.dataset.origin === 'browser' && (log.textContent.length > 0 || img)) {
    finish({text: log.textContent, figure: !!img, status});
  }
  else if (/出错|无法/.test(status)) finish({error: status + ' ' + bar});
}, 100);
const run = () => {
  const button = cell.querySelector('[data-action="run"]');
  if (button.disabled) { setTimeout(run, 50); return; }
  t0 = performance.now();
  button.click();
};
run();
"""

# Through the page's runtime, in two steps: a runaway loop started (and running), then 停止 and the next run.
START_RUNAWAY = """
const done = arguments[arguments.length - 1];
window.__runaway = Course.python.getRuntime().run('while True:\\n    pass', {}).then(() => 'finished', (e) => e.type);
setTimeout(() => done(true), 500);
"""
STOP_RUNAWAY_AND_RECOVER = """
const done = arguments[arguments.length - 1];
(async () => {
  const rt = Course.python.getRuntime();
  const t0 = performance.now();
  await rt.stop();
  let out = '';
  const next = await rt.run('print(6 * 7)', {onStdout: (t) => { out += t; }});
  done({runaway: await window.__runaway, out, ok: next.ok, ms: performance.now() - t0});
})().catch((e) => done({error: String(e)}));
"""


def open_page(driver, url: str) -> None:
    driver.get(url)
    for _ in range(200):
        if driver.execute_script("return document.readyState") == "complete":
            return
        time.sleep(0.05)
    raise AssertionError(f"{url} did not finish loading")


def wait_for(driver, script: str, what: str, timeout: float = 30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{driver.engine}: {what} did not happen in {timeout:g} s")


def test_a_page_shows_its_math_widgets_glossary_and_search(driver, engines_http):
    open_page(driver, engines_http + PAGE)
    assert driver.execute_script("return document.documentElement.lang") == "zh-CN"
    assert driver.execute_script("return document.querySelectorAll('.katex').length") > 20
    # the first widget mounts when it nears the view
    driver.execute_script("document.querySelector('.widget').scrollIntoView({block: 'center'})")
    wait_for(driver, "return document.querySelector('.widget[data-ready=\"true\"]')", "a widget mounting")
    underline = driver.execute_script(
        "const g = document.querySelector('.gloss'); return g && getComputedStyle(g).textDecorationLine"
    )
    assert underline is None or "underline" in underline  # the glossary's dotted underline
    # search: the results list is visible, not a sliver
    driver.execute_script("window.scrollTo(0, 0); document.querySelector('.search-open').click()")
    wait_for(driver, "return document.querySelector('.search-input')", "the search dialog")
    driver.find_element("css selector", ".search-input").send_keys("注意力")
    height = wait_for(
        driver,
        "const r = document.querySelectorAll('.search-result'); const list = document.querySelector('.search-results');"
        "return r.length > 2 && list.getBoundingClientRect().height",
        "search results",
    )
    assert height > 100, f"{driver.engine}: the results list is {height:.0f} px tall"


def test_a_plotting_cell_draws_its_figure(driver, engines_http):
    open_page(driver, engines_http + PLOT_PAGE)
    result = driver.execute_async_script(RUN_FIRST_CELL, 0)
    assert result.get("figure"), f"{driver.engine}: {result}"


@pytest.mark.parametrize("transport", ["http", "file"])
def test_typing_into_the_poem_writer_shows_a_prediction(driver, engines_http, engines_site, transport):
    """你来写一句 (module 07): type a few characters, traditional ones among them; the model runs in the page and
    the top next characters appear for exactly that text."""
    base = engines_http if transport == "http" else engines_site.resolve().as_uri() + "/"
    open_page(driver, base + "module-07-train-transformer.html")
    driver.execute_script("document.querySelector('.widget-poem-writer').scrollIntoView({block: 'center'})")
    wait_for(
        driver,
        "return document.querySelector('.widget-poem-writer[data-model=\"ready\"]')",
        "the poem writer's model loading",
        timeout=60,
    )
    box = driver.find_element("css selector", ".widget-poem-writer .widget-body input.pw-input")
    box.clear()
    box.send_keys("春眠不覺曉，")
    shown = wait_for(
        driver,
        "const w = document.querySelector('.widget-poem-writer');"
        "return w.dataset.resultFor === '春眠不覺曉，' &&"
        " [...w.querySelectorAll('.widget-body .pw-top .bar-label')].map((e) => e.textContent)",
        "a prediction for the typed text",
    )
    assert len(shown) == 10, f"{driver.engine} over {transport}: {shown}"
    converted = driver.execute_script(
        "return [...document.querySelectorAll('.widget-poem-writer .widget-body .pw-char.is-converted')]"
        ".map((e) => e.textContent)"
    )
    assert converted == ["觉", "晓"], f"{driver.engine}: {converted}"


# An exercise: 检查 with the starter (fails, a learner's message and the first hint), then with the solution put
# into the editor (passes, counted in the progress).
CHECK_EXERCISE = """
const done = arguments[arguments.length - 1];
const root = document.querySelector('#exercise-causal-mask');
root.scrollIntoView({block: 'center'});
const verdict = () => new Promise((resolve) => {
  const timer = setInterval(() => {
    if (root.dataset.verdict) { clearInterval(timer); resolve(root.dataset.verdict); }
  }, 100);
});
const click = () => {
  const button = root.querySelector('.exercise-check');
  if (button.disabled) { setTimeout(click, 50); return; }
  delete root.dataset.verdict;
  button.click();
};
(async () => {
  click();
  const first = await verdict();
  const message = root.querySelector('.exercise-check-item.is-fail .exercise-message')?.textContent || '';
  const hints = root.querySelectorAll('.exercise-hints .exercise-hint').length;
  const cell = Course.cells.cells.find((c) => c.exercise && c.exercise.id === 'causal-mask');
  cell.setCode('import numpy as np\\n\\ndef causal_mask(n):\\n    return np.tril(np.ones((n, n), dtype=bool))\\n');
  click();
  const second = await verdict();
  const stored = JSON.parse(localStorage.getItem('attention-course:progress') || '{}');
  const record = ((stored.pages || {})['module-05-attention'] || {}).exercises || {};
  done({first, message, hints, second, passed: !!(record['causal-mask'] || {}).passed});
})().catch((e) => done({error: String(e)}));
"""


@pytest.mark.parametrize("transport", ["http", "file"])
def test_on_module_05_a_cell_prints_an_exercise_is_checked_and_stop_brings_python_back(
    driver, engines_http, engines_site, transport
):
    """One visit, one Python: the first cell's output, an exercise that fails with its message and hint and then
    passes (and is recorded), then a runaway loop that 停止 ends — in WebKit by a new worker, read the same way
    from disk — and the next run's output."""
    base = engines_http if transport == "http" else engines_site.resolve().as_uri() + "/"
    open_page(driver, base + PAGE)
    where = f"{driver.engine} over {transport}"
    result = driver.execute_async_script(RUN_FIRST_CELL, 0)
    assert "error" not in result, f"{where}: {result}"
    assert "输出形状" in result["text"], result

    result = driver.execute_async_script(CHECK_EXERCISE)
    assert "error" not in result, f"{where}: {result}"
    assert result["first"] == "fail" and "第一个不同的元素在 [0, 1]" in result["message"], result
    assert result["hints"] == 1 and result["second"] == "pass" and result["passed"], result

    # a runaway loop; the browser's thread that runs it is the one busiest while it runs
    driver.execute_async_script(START_RUNAWAY)
    looping, _ = busiest_thread(browser_processes(driver), seconds=1)
    result = driver.execute_async_script(STOP_RUNAWAY_AND_RECOVER)
    result.pop("ms", None)
    assert result == {"runaway": "Stopped", "out": "42\n", "ok": True}, f"{where}: {result}"
    # and the stopped loop is over: its thread has ended or rests (WebKit kept the old worker spinning, a core and
    # its memory per 停止)
    _, shares = busiest_thread(browser_processes(driver), seconds=2)
    assert shares.get(looping, 0) < 0.2, f"{where}: after 停止, the loop's thread still used {shares[looping]:.0%}"


def browser_processes(driver) -> list[int]:
    """The processes the driver started (its browser and the browser's content processes), from /proc."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [driver.service.process.pid]
    while frontier:
        pid = frontier.pop()
        found.append(pid)
        frontier += [child for child, parent in parents.items() if parent == pid]
    return found


def busiest_thread(pids: list[int], seconds: float) -> tuple[str, dict[str, float]]:
    """The thread of `pids` that used most CPU over `seconds`, and every thread's share of a core (from
    /proc/<pid>/task/*/stat; a thread that ended meanwhile is not in it)."""

    def times() -> dict[str, int]:
        out = {}
        for pid in pids:
            for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
                try:
                    fields = stat.read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                out[str(stat.parent)] = int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks
        return out

    before = times()
    time.sleep(seconds)
    after = times()
    shares = {k: (after[k] - before.get(k, after[k])) / os.sysconf("SC_CLK_TCK") / seconds for k in after}
    return max(shares, key=shares.get, default=""), shares


# For each widget, how much its column heads differ in width and in height: standing on end, they are all one line
# wide and as tall as their text is long; lying flat, the other way round.
COLUMN_HEADS = """
return [...document.querySelectorAll(arguments[0])].map((w) => {
  const boxes = [...w.querySelectorAll('thead .heat-col')].map((e) => e.getBoundingClientRect()).filter((r) => r.width);
  const spread = (xs) => Math.round(Math.max(...xs) - Math.min(...xs));
  return [w.dataset.widget, boxes.length, spread(boxes.map((r) => r.width)), spread(boxes.map((r) => r.height))];
}).filter(([, n]) => n > 3);  // a widget between its fallback and its live view shows no grid
"""


def test_in_a_narrow_window_the_page_keeps_its_width_and_column_heads_stand_on_end(driver, engines_http):
    """The narrowest window the engine opens (asked for 390 px: MiniBrowser's stops at ~447 px, the phone layout;
    headless Firefox's at 500 px): nothing makes the page scroll sideways, and the attention grids' column heads stand
    on end (WebKit ignores writing-mode on a table cell: they lay flat and widened every column, or were drawn
    sideways and cut)."""
    open_page(driver, engines_http + PAGE)
    driver.set_window_size(390, 900)
    try:
        assert driver.execute_script("return innerWidth") <= 500, f"{driver.engine}: the window stayed wide"
        for kind in ("multi-head", "model-attention"):
            driver.execute_script(f"document.querySelector('.widget-{kind}').scrollIntoView({{block: 'start'}})")
            wait_for(driver, f"return document.querySelector('.widget-{kind}[data-ready]')", f"the {kind} mounting")
        ready = ".widget-multi-head[data-ready], .widget-model-attention[data-ready]"
        heads = driver.execute_script(COLUMN_HEADS, ready)
        assert len(heads) > 1 and all(widths <= 1 and heights >= 8 for _, _, widths, heights in heads), (
            f"{driver.engine}: {heads}"
        )
        overflow = driver.execute_script("return document.documentElement.scrollWidth - innerWidth")
        assert overflow <= 0, f"{driver.engine}: the page scrolls {overflow} px sideways"
    finally:
        driver.set_window_size(1280, 900)


# Scrolls up 300 px at a time; after each step, how far the block in view moved beyond the 300 px (a jump), as the
# reader would see it painted.
SCROLL_UP = """
const done = arguments[arguments.length - 1];
const inView = () => {
  let el = document.elementFromPoint(innerWidth / 2, innerHeight / 3);
  while (el && el.parentElement && !el.parentElement.classList.contains('page-section')) el = el.parentElement;
  return el && el.parentElement ? el : null;
};
const jumps = [];
const step = (n) => {
  if (n === 0) { done(jumps); return; }
  const el = inView();
  const before = el && el.getBoundingClientRect().top;
  window.scrollBy(0, -300);
  // measured as the next frame is painted (two frames on: a ResizeObserver runs after a frame's animation callbacks)
  setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(() => {
    if (el && el.isConnected) jumps.push(Math.round(el.getBoundingClientRect().top - before - 300));
    step(n - 1);
  })), 400);
};
step(12);
"""


def test_scrolling_up_from_a_heading_link_the_text_stays_put(driver, engines_http):
    """Where the engine has no scroll anchoring (WebKit), the text in view stays put while widgets, figures and
    cells above it mount (theme/js/site/scroll-anchor.js): it jumped 1,200-3,500 px on the way up from module
    05's #quiz."""
    driver.set_window_size(390, 900)
    try:
        open_page(driver, engines_http + PAGE + "#quiz")
        time.sleep(1)
        jumps = driver.execute_async_script(SCROLL_UP)
        assert len(jumps) > 6 and max(map(abs, jumps)) < 150, f"{driver.engine}: {jumps}"
    finally:
        driver.set_window_size(1280, 900)


HANDS_ON = "module-08-build-transformer.html"

# The learner's passing code of module 08's exercises, as a visit after they were solved finds it in the course
# progress (the reference answers here); the page hands it to Python before the first cell runs.
SOLVED_BEFORE = """
const exercises = {};
for (const [id, code] of Object.entries(arguments[0])) {
  exercises[id] = {passed: true, attempts: 1, failures: 0, hints: 0, code};
}
const progress = {v: 1, pages: {'module-08-build-transformer': {exercises}}};
localStorage.setItem('attention-course:progress', JSON.stringify(progress));
return Object.keys(exercises).length;
"""

# Runs the cell with this id; done with its status and output once it has finished (or failed).
RUN_CELL = """
const [id, done] = [arguments[0], arguments[arguments.length - 1]];
const cell = document.querySelector('#cell-' + id);
cell.scrollIntoView({block: 'center'});
const t0 = performance.now();
cell.querySelector('[data-action="run"]').click();
const timer = setInterval(() => {
  const status = cell.querySelector('.cell-status').textContent;
  if (/完成|出错|已停止/.test(status)) {
    clearInterval(timer);
    done({status, out: cell.querySelector('.cell-log').textContent, ms: performance.now() - t0});
  }
}, 100);
"""

# Starts the induction training, and 停止 once its live curve shows step `arguments[0]`.
TRAIN_AND_STOP = """
const [steps, done] = [arguments[0], arguments[arguments.length - 1]];
const cell = document.querySelector('#cell-train-induction');
cell.scrollIntoView({block: 'center'});
cell.querySelector('[data-action="run"]').click();
const t0 = performance.now();
const timer = setInterval(() => {
  const curve = cell.querySelector('.cell-widget[data-widget="training-curve"]');
  const seen = [...((curve && curve.textContent) || '').matchAll(/第 (\\d+) 步/g)].map((m) => Number(m[1]));
  const status = cell.querySelector('.cell-status').textContent;
  if (/出错/.test(status)) {
    clearInterval(timer);
    done({error: status + cell.querySelector('.cell-log').textContent});
  }
  if (seen.length && Math.max(...seen) >= steps) {
    clearInterval(timer);
    const first = performance.now() - t0;
    cell.querySelector('[data-action="stop"]').click();
    const wait = setInterval(() => {  // the status, then the notice 停止 writes once the runtime has answered
      const now = cell.querySelector('.cell-status').textContent;
      if (/完成/.test(now) || (/已停止/.test(now) && !cell.querySelector('.cell-notice').hidden)) {
        clearInterval(wait);
        done({status: now, notice: cell.querySelector('.cell-notice').textContent, ms: first,
              curve: curve.textContent});
      }
    }, 100);
  }
}, 100);
"""


def test_on_module_08_the_learners_model_trains_and_a_stop_keeps_it(driver, engines_http, engines_site):
    """The exercises' passing code from an earlier visit is handed to Python, the assembled model runs, the induction
    training draws its live curve, 停止 in the middle ends the loop without restarting Python, and the next cell
    uses the model trained so far. Firefox over http, WebKit from disk: one visit each, both transports covered
    (bench/training_bench.py measures every engine × transport)."""
    transport = "http" if driver.engine == "firefox" else "file"
    base = engines_http if transport == "http" else engines_site.resolve().as_uri() + "/"
    where = f"{driver.engine} over {transport}"
    open_page(driver, base + HANDS_ON)
    assert driver.execute_script(SOLVED_BEFORE, exercise_solutions(engines_site, HANDS_ON)) == 6
    open_page(driver, base + HANDS_ON)
    result = driver.execute_async_script(RUN_CELL, "assemble")
    assert "完成" in result["status"] and "logits： (1, 20, 12)" in result["out"], f"{where}: {result}"
    result = driver.execute_async_script(TRAIN_AND_STOP, 20)
    assert "error" not in result and "已停止" in result["status"], f"{where}: {result}"
    assert "没有重启" in result["notice"] and "已停止" in result["curve"], f"{where}: {result}"
    result = driver.execute_async_script(RUN_CELL, "induction-head")
    assert "完成" in result["status"] and "最后一层各头的归纳得分" in result["out"], f"{where}: {result}"
