"""Code cells in a real Chromium, over http and file://, on the real course page (module 05).

Booting Pyodide costs seconds, so the tests that need Python share ONE page per transport (module scope,
in file order); the editor-only tests (autocomplete, persistence, no layout shift) use fresh pages and
never load Python. The page ships highlighted static code; CodeMirror (assets/editor.js) arrives only when
the reader focuses or runs a cell or scrolls near the code, so the tests click into a cell like a reader
and wait for it to become an editor (`data-editor="ready"`). Every page fails its test on console errors,
uncaught exceptions or a request that leaves the site. Timings go to test-artifacts/cells-timings.json.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.e2e.conftest import ALL_LAID_OUT_CSS, _close_and_check, _open_context, artifact

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("cells")]

PAGE = "module-05-attention.html"
CELL_IDS = re.findall(  # the code cells' ids (an exercise has an :id: line too)
    r"^```\{code-cell\} python\n:id: (\S+)$", (ROOT / "content" / "module-05-attention.md").read_text("utf-8"), re.M
)
CELLS = ".code-cell:not([data-exercise])"  # the authored cells: an exercise's editor is a code cell too
SCRATCH = "#cell-multi-head"  # the cell the interaction tests type into (reset afterwards)
TIMINGS: dict[str, dict] = {}


@pytest.fixture(scope="module", params=["http", "file"])
def py_page(request, browser, http_base, file_base):
    """One page per transport whose Python runtime is shared by the tests below."""
    base = http_base if request.param == "http" else file_base
    context, page = _open_context(browser, base, viewport={"width": 1280, "height": 900})
    page.add_init_script(
        "window.Course = Object.assign(window.Course || {}, "
        "{options: Object.assign((window.Course || {}).options || {}, {noPrefetch: true})});"
    )  # measure a truly cold first run
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    page.goto(base + PAGE)
    page.transport = request.param  # type: ignore[attr-defined]
    yield page
    _close_and_check(context, page)
    artifact("cells-timings.json").write_text(json.dumps(TIMINGS, indent=2, ensure_ascii=False), "utf-8")


def logs(page) -> list[str]:
    return page.eval_on_selector_all(f"{CELLS} .cell-log", "els => els.map(e => e.textContent)")


def focus_code(page, cell: str) -> None:
    """Click into a cell's code like a reader: the static code asks for the editor, which takes the focus."""
    page.click(f"{cell} .cell-editor")
    page.wait_for_selector(f"{cell}[data-editor='ready'] .cm-content:focus")


def set_code(page, cell: str, code: str) -> None:
    """Replace a cell's code like a reader would (focus, select all, type) — without auto-indent noise."""
    focus_code(page, cell)
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(code)


def shown_code(page, cell: str) -> str:
    """The code a reader sees in the cell: the editor's text, or the static code before the editor exists."""
    return page.evaluate(
        """sel => {
        const s = document.querySelector(sel);
        const lines = s.querySelectorAll('.cm-content .cm-line');  // short cells: CodeMirror renders every line
        return s.querySelector('.cm-content') ? [...lines].map(l => l.textContent).join('\\n')
            : s.querySelector('.cell-source').textContent.replace(/\\n$/, '');
    }""",
        cell,
    )


def wait_for_editors(page) -> None:
    page.wait_for_function("[...document.querySelectorAll('.code-cell')].every(s => s.dataset.editor === 'ready')")


def wait_status(page, cell: str, pattern: str, timeout: float = 60_000) -> str:
    page.wait_for_function(
        "([sel, pat]) => new RegExp(pat).test(document.querySelector(sel + ' .cell-status').textContent)",
        arg=[cell, pattern],
        timeout=timeout,
    )
    return page.text_content(f"{cell} .cell-status")


def python_bytes(page, built_site: Path) -> int:
    """Bytes of the Python runtime the page loaded, not counting the small loader python-runtime.js that
    every page with cells includes. http: body sizes from Resource Timing; file:// (which Resource Timing
    does not report): the sizes of the wrapper scripts the runtime index says it read."""
    if page.base.startswith("file:"):
        wrappers = page.evaluate(
            "Course.python?.index ? Course.python.index.assets.flatMap(a => a.wrappers || [a.wrapper]) : []"
        )
        folder = built_site / "assets" / "python"
        return sum((folder / name).stat().st_size for name in wrappers + ["runtime-index.js"] if wrappers)
    entries = page.evaluate("performance.getEntriesByType('resource').map(e => [e.name, e.encodedBodySize])")
    return sum(size for url, size in entries if "/assets/python/" in url and "/python-runtime.js" not in url)


# ------------------------------------------------------------------------------------------ with Python


def test_every_cell_runs_in_the_browser_and_prints_what_the_build_printed(py_page, built_site):
    page = py_page
    assert page.eval_on_selector_all(CELLS, "els => els.map(e => e.dataset.cellId)") == CELL_IDS
    build_logs = logs(page)
    # every seed cell shows its build-time output before anything runs (text, or a widget it showed)
    widgets = page.eval_on_selector_all(
        f"{CELLS} .cell-output", "els => els.map(e => !!e.querySelector('.cell-widgets .widget'))"
    )
    assert all(log or widget for log, widget in zip(build_logs, widgets)), "every seed cell shows its build-time output"
    assert page.eval_on_selector_all(f"{CELLS} .cell-output-label", "els => els.map(e => e.textContent)") == [
        "预先算好的输出"
    ] * len(CELL_IDS)
    assert python_bytes(page, built_site) == 0, "nothing of Python is loaded before the first run"
    # not even the runtime's own script: it is not part of the first view (issue 19)…
    assert page.evaluate("typeof Course.python?.getRuntime") == "undefined"
    assert not [u for u in page.watch.requests if "python-runtime.js" in u]
    # nor the cells' controller: only the small cells.js is there, with the buttons it made usable
    assert page.evaluate("typeof Course.cells") == "undefined"
    assert not [u for u in page.watch.requests if "cells-page.js" in u]
    assert page.eval_on_selector_all('.code-cell [data-action="run"]', "bs => bs.every(b => !b.disabled)")
    # …until the reader's first input: then both come; with noPrefetch, as here, nothing of Python itself is
    # downloaded (not even the runtime index) and no worker starts
    page.mouse.move(5, 5)
    page.wait_for_function("!!Course.python?.getRuntime?.()", timeout=15_000)
    assert page.evaluate("Course.python.index === undefined")
    assert [u for u in page.watch.requests if "cells-page.js" in u]
    assert page.evaluate("Course.cells.runtime.state") == "idle"
    assert [u for u in page.watch.requests if "python-runtime.js" in u]
    assert page.workers == []
    assert python_bytes(page, built_site) == 0
    assert page.evaluate("Course.python.getRuntime().state") == "idle"

    started = time.perf_counter()
    page.click(".cells-run-all")
    page.wait_for_function(
        "document.querySelector('.cell-output').dataset.origin === 'browser' && "
        "document.querySelector('.cell-log').textContent.length > 0",
        timeout=120_000,
    )
    first_output = time.perf_counter() - started
    page.wait_for_function(
        "/全部运行完成|中断/.test(document.querySelector('.cells-bar-status').textContent)", timeout=120_000
    )
    assert page.text_content(".cells-bar-status") == "全部运行完成。"
    assert logs(page) == build_logs
    assert page.eval_on_selector_all(f"{CELLS} .cell-output-label", "els => els.map(e => e.textContent)") == [
        "运行输出"
    ] * len(CELL_IDS)
    TIMINGS.setdefault(page.transport, {}).update(
        cold_click_to_first_output_s=round(first_output, 2), python_bytes_first_run=python_bytes(page, built_site)
    )


def test_ctrl_enter_runs_and_reports_the_time(py_page):
    page = py_page
    set_code(page, SCRATCH, "print(6 * 7)")
    times = []
    for _ in range(5):
        page.evaluate("sel => document.querySelector(sel + ' .cell-status').textContent = ''", SCRATCH)
        started = time.perf_counter()
        page.keyboard.press("ControlOrMeta+Enter")
        page.wait_for_function(
            "sel => document.querySelector(sel + ' .cell-log').textContent === '42\\n'", arg=SCRATCH, timeout=30_000
        )
        times.append(time.perf_counter() - started)
    assert re.fullmatch(r"完成 · \d+\.\d\d s", wait_status(page, SCRATCH, "完成"))
    TIMINGS.setdefault(page.transport, {})["warm_ctrl_enter_to_output_median_s"] = round(statistics.median(times), 3)


def page_holding_back(py_page, pattern: str):
    """A new page in py_page's profile (Python comes from the browser cache) whose requests for `pattern` are
    held, not answered: → (page, the held routes), for a test to answer when it chooses."""
    page = py_page.context.new_page()
    page.on("console", py_page.watch.on_console)
    page.on("pageerror", py_page.watch.on_page_error)
    held = []
    page.route(pattern, lambda route: held.append(route))
    return page, held


def test_static_code_runs_with_ctrl_enter_before_the_editor_arrives(py_page):
    """A slow connection: the editor bundle is still on its way, yet Ctrl/⌘+Enter on the focused static
    code runs it; when the editor arrives it takes over the focus."""
    if py_page.transport != "http":
        pytest.skip("holding a script back needs request routing (http); the key handling is the same on file://")
    page, held = page_holding_back(py_page, "**/assets/editor.js*")  # not answered until the run is done
    page.add_init_script(
        "window.Course = Object.assign(window.Course || {}, "
        "{options: Object.assign((window.Course || {}).options || {}, {noPrefetch: true})});"
    )
    page.goto(py_page.base + PAGE)
    cell = "#cell-attention-fn"
    build_log = page.text_content(f"{cell} .cell-log")
    page.focus(f"{cell} .cell-source")
    page.keyboard.press("ControlOrMeta+Enter")
    assert wait_status(page, cell, "完成|出错").startswith("完成")
    assert page.text_content(f"{cell} .cell-log") == build_log
    assert page.get_attribute(f"{cell} .cell-output", "data-origin") == "browser"
    assert held and page.locator(".cm-editor").count() == 0
    for route in held:
        route.continue_()
    page.wait_for_selector(f"{cell}[data-editor='ready'] .cm-content:focus")
    wait_for_editors(page)
    page.close()


def test_what_the_reader_does_before_the_cells_controller_arrives_is_carried_out(py_page):
    """A slow connection: the cells' controller (assets/cells-page.js, loaded at the first input) is still on its
    way, yet a click on 运行 and Ctrl/⌘+Enter in another cell's code are kept, and run, in order, when it arrives."""
    if py_page.transport != "http":
        pytest.skip("holding a script back needs request routing (http); the queue is the same on file://")
    page, held = page_holding_back(py_page, "**/assets/cells-page.js*")  # answered below
    # no stored edits (earlier tests of this profile made some): with them the controller would come at once
    page.add_init_script(
        "for (const k of Object.keys(localStorage)) "
        "if (k.startsWith('attention-course:cell:')) localStorage.removeItem(k);"
    )
    page.add_init_script(
        "window.Course = Object.assign(window.Course || {}, "
        "{options: Object.assign((window.Course || {}).options || {}, {noPrefetch: true})});"
    )
    page.goto(py_page.base + PAGE)
    first, second = "#cell-attention-fn", "#cell-qkv-projection"
    page.click(f"{first} .cell-run")  # the pointer's move to the button is the first input: the controller is asked for
    page.focus(f"{second} .cell-source")
    page.keyboard.press("ControlOrMeta+Enter")
    page.wait_for_timeout(300)
    assert held, "the first input asked for the controller"
    assert page.evaluate("typeof Course.cells") == "undefined"
    assert page.evaluate("Course.cellsBoot.pending.length") == 3  # the click, the focus, the key
    assert page.text_content(f"{first} .cell-status") == page.text_content(f"{second} .cell-status") == ""
    for route in held:
        route.continue_()
    assert wait_status(page, first, "完成|出错").startswith("完成")
    assert wait_status(page, second, "完成|出错").startswith("完成")
    assert page.get_attribute(f"{second} .cell-output", "data-origin") == "browser"
    page.wait_for_selector(f"{second}[data-editor='ready'] .cm-content:focus")  # the focus was carried over too
    page.close()


def test_shift_enter_runs_and_moves_to_the_next_cell(py_page):
    page = py_page
    focus_code(page, "#cell-attention-fn")  # self-contained, so it runs fine in any namespace state
    page.keyboard.press("Shift+Enter")
    assert page.evaluate("!!document.activeElement.closest('#cell-qkv-projection')")
    assert wait_status(page, "#cell-attention-fn", "完成|出错").startswith("完成")


def test_an_exception_shows_a_traceback_naming_the_line(py_page):
    page = py_page
    set_code(page, SCRATCH, "x = 1\n\ndef f(v):\n    return v / 0\n\nf(x)")
    page.click(f"{SCRATCH} .cell-run")
    assert wait_status(page, SCRATCH, "出错") == "出错 · 第 4 行"
    error = page.text_content(f"{SCRATCH} .cell-error")
    assert 'File "<cell-multi-head>", line 6, in <module>' in error
    assert 'File "<cell-multi-head>", line 4, in f' in error
    assert error.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "pyodide" not in error and "_pyodide" not in error  # trimmed to the reader's code
    assert page.locator(f"{SCRATCH} .cm-errorLine").inner_text() == "    return v / 0"


def test_a_huge_error_message_is_capped_like_the_output(py_page):
    page = py_page
    set_code(page, SCRATCH, 'raise ValueError("\\n".join(str(i) for i in range(5000)))')
    page.click(f"{SCRATCH} .cell-run")
    assert wait_status(page, SCRATCH, "出错").startswith("出错")
    error = page.text_content(f"{SCRATCH} .cell-error")
    assert error.count("\n") == 2000 and "\n1990\n" in error and "\n4999" not in error
    assert page.locator(f"{SCRATCH} .cell-truncated").count() == 1


def test_printed_markup_is_shown_as_text(py_page):
    page = py_page
    xss = "<img src=x onerror=alert(1)>"
    set_code(page, SCRATCH, f"print({xss!r})\n{xss!r}")
    page.click(f"{SCRATCH} .cell-run")
    wait_status(page, SCRATCH, "完成")
    assert page.text_content(f"{SCRATCH} .cell-stdout") == xss + "\n"
    assert page.text_content(f"{SCRATCH} .cell-result") == repr(xss)
    assert page.locator(f"{SCRATCH} .cell-log img").count() == 0
    page.wait_for_timeout(200)
    assert page.dialogs == []


def test_a_million_lines_are_truncated_and_the_page_stays_responsive(py_page):
    page = py_page
    set_code(page, SCRATCH, "for i in range(10**6):\n    print(i)")
    page.click(f"{SCRATCH} .cell-run")
    wait_status(page, SCRATCH, "完成|出错", timeout=60_000)
    assert page.text_content(f"{SCRATCH} .cell-truncated") == "输出过长，已截断"
    text = page.text_content(f"{SCRATCH} .cell-stdout")
    assert text.startswith("0\n1\n2\n") and text.count("\n") <= 2000
    started = time.perf_counter()
    assert page.evaluate("1 + 1") == 2
    assert time.perf_counter() - started < 1.0


def test_stop_interrupts_an_endless_loop_and_python_comes_back(py_page):
    page = py_page
    set_code(page, SCRATCH, "while True:\n    pass")
    page.click(f"{SCRATCH} .cell-run")
    wait_status(page, SCRATCH, "运行中")
    stop_clicked = time.perf_counter()
    page.click(f"{SCRATCH} .cell-stop")
    # 停止 ends the worker at once (runtime.js); a fresh one starts meanwhile: its time is bench/site_bench.py's.
    wait_status(page, SCRATCH, "已停止", timeout=5_000)
    stopped = time.perf_counter() - stop_clicked
    notice = page.locator(f"{SCRATCH} .cell-notice")
    assert "命名空间已重置" in notice.inner_text()
    assert notice.get_by_role("button", name="重新运行上方单元").is_visible()

    set_code(page, SCRATCH, "print(1 + 1)")
    started = time.perf_counter()
    page.click(f"{SCRATCH} .cell-run")
    page.wait_for_function(
        "sel => document.querySelector(sel + ' .cell-log').textContent === '2\\n'", arg=SCRATCH, timeout=60_000
    )
    TIMINGS.setdefault(page.transport, {}).update(
        stop_to_stopped_s=round(stopped, 3), rerun_after_stop_to_output_s=round(time.perf_counter() - started, 3)
    )

    # The namespace is gone (attention() came from the first cell); 重新运行上方单元 rebuilds it.
    set_code(page, SCRATCH, "attention")
    page.click(f"{SCRATCH} .cell-run")
    assert wait_status(page, SCRATCH, "出错").startswith("出错")
    assert "NameError" in page.text_content(f"{SCRATCH} .cell-error")
    page.locator(f"{SCRATCH} .cell-notice").get_by_role("button", name="运行上方单元").click()
    wait_status(page, "#cell-single-head", "完成", timeout=30_000)
    page.click(f"{SCRATCH} .cell-run")
    wait_status(page, SCRATCH, "完成")
    assert page.text_content(f"{SCRATCH} .cell-result").startswith("<function attention")
    page.click(f"{SCRATCH} .cell-reset")


# ---------------------------------------------------------------------------------- without Python


def open_without_python(page) -> None:
    page.add_init_script(
        "window.Course = Object.assign(window.Course || {}, "
        "{options: Object.assign((window.Course || {}).options || {}, {noPrefetch: true})});"
    )  # these tests never need Python
    page.goto(page.base + PAGE)


def test_the_editor_loads_only_when_needed_and_the_caret_lands_where_the_reader_clicked(page):
    page.add_init_script(
        "window.Course = Object.assign(window.Course || {}, "
        "{options: Object.assign((window.Course || {}).options || {}, {noIdleEditor: true})});"
    )  # only the reader's click may load it
    open_without_python(page)
    page.wait_for_timeout(300)
    lazy = ("/assets/editor.js", "/assets/numpy-completions.js")
    assert not [u for u in page.watch.requests if any(name in u for name in lazy)]
    assert page.locator(".cm-editor").count() == 0
    assert page.eval_on_selector_all(CELLS, "els => els.map(e => e.dataset.editor)") == ["static"] * len(CELL_IDS)
    assert page.eval_on_selector_all(".cell-source", "els => els.every(e => e.tabIndex === 0)")

    cell = "#cell-causal-mask"
    lines = shown_code(page, cell).split("\n")
    source = page.locator(f"{cell} .cell-source")
    line_height = float(source.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)"))
    top = float(source.evaluate("e => parseFloat(getComputedStyle(e).paddingTop)"))
    width = float(source.evaluate("e => e.getBoundingClientRect().width"))
    # the far right of the second line: the caret must end up at the end of that line. Playwright aims the click
    # relative to the element when it clicks, once the element has stopped moving (sections above it that render late,
    # content-visibility: auto, can still push it down under load: a position measured earlier missed it).
    source.click(position={"x": width - 8, "y": top + 1.5 * line_height})
    page.wait_for_selector(f"{cell}[data-editor='ready'] .cm-content:focus")
    page.keyboard.type("  # 读者")
    assert shown_code(page, cell).split("\n") == [lines[0], lines[1] + "  # 读者", *lines[2:]]
    assert [u for u in page.watch.requests if "/assets/editor.js" in u]
    wait_for_editors(page)  # the other cells follow, one per task
    page.click(f"{cell} .cell-reset")


def test_autocomplete_lists_numpy_members_before_python_loads(page):
    open_without_python(page)
    set_code(page, SCRATCH, "")
    page.keyboard.type("np.")
    options = page.locator(".cm-tooltip-autocomplete li")
    options.filter(has_text="linalg").first.wait_for()
    page.keyboard.type("zer")
    page.locator(".cm-tooltip-autocomplete li", has_text="zeros").first.wait_for()
    assert "(shape" in page.locator(".cm-tooltip-autocomplete li[aria-selected]").inner_text()
    page.keyboard.press("Escape")
    page.keyboard.press("End")
    page.keyboard.insert_text("\nnp.linalg.")
    page.keyboard.type("no")
    page.locator(".cm-tooltip-autocomplete li", has_text="norm").first.wait_for()
    page.keyboard.press("Escape")
    page.keyboard.insert_text("\nrng.")  # rng = np.random.default_rng(0) above → a Generator
    page.keyboard.type("nor")
    page.locator(".cm-tooltip-autocomplete li", has_text="normal").first.wait_for()
    page.keyboard.press("Escape")
    page.keyboard.insert_text("\nsoft")  # defined in the first cell of the page
    page.keyboard.press("Control+Space")
    page.locator(".cm-tooltip-autocomplete li", has_text="softmax").first.wait_for()
    assert page.evaluate("Course.cells.runtime.state") == "idle"


def test_edits_survive_a_reload_and_reset_restores_the_original(page):
    open_without_python(page)
    cell = "#cell-causal-mask"
    original = shown_code(page, cell)
    set_code(page, cell, "print('我的修改')")
    assert page.locator(f"{cell} .cell-modified").is_visible()
    page.wait_for_timeout(100)
    page.reload()
    # shown at once, as static text; the editor is loaded without waiting for the reader
    assert shown_code(page, cell) == "print('我的修改')"
    page.wait_for_selector(f"{cell}[data-editor='ready']")
    assert shown_code(page, cell) == "print('我的修改')"
    assert page.locator(f"{cell} .cell-modified").is_visible()
    # texts read as text: after the reload the cell's section may not be rendered yet (content-visibility: auto),
    # and innerText is empty there
    assert page.locator(f"{cell} .cell-modified").text_content().strip() == "已修改"
    # The output under the edited code is still the build's: it says it comes from the original code.
    label = page.locator(f"{cell} .cell-output-label")
    assert "输出来自原始代码" in label.text_content()
    assert page.locator(f"{cell} .cell-output[data-stale]").count() == 1

    page.click(f"{cell} .cell-reset")
    assert shown_code(page, cell) == original
    assert not page.locator(f"{cell} .cell-modified").is_visible()
    assert label.text_content().strip() == "预先算好的输出"
    page.reload()
    assert shown_code(page, cell) == original


def test_reset_before_the_editor_loads_restores_the_highlighted_original(page):
    page.add_init_script(
        "window.Course = Object.assign(window.Course || {}, "
        "{options: Object.assign((window.Course || {}).options || {}, {noIdleEditor: true})});"
    )
    open_without_python(page)
    cell = "#cell-causal-mask"
    original = shown_code(page, cell)
    original_html = page.inner_html(f"{cell} .cell-source")
    page.evaluate("""() => localStorage.setItem('attention-course:cell:v1:' + document.body.dataset.page +
        ':causal-mask', JSON.stringify({base: document.querySelector('#cell-causal-mask').dataset.sourceHash,
        code: 'print("改过")'}))""")
    page.route("**/assets/editor.js*", lambda route: None)  # never arrives (http); file:// is not held
    page.reload()
    if page.base.startswith("http"):
        page.wait_for_timeout(200)
        assert page.get_attribute(cell, "data-editor") != "ready"
    assert shown_code(page, cell) == 'print("改过")' and page.locator(f"{cell} .cell-modified").is_visible()
    page.click(f"{cell} .cell-reset")
    assert shown_code(page, cell) == original and not page.locator(f"{cell} .cell-modified").is_visible()
    if page.base.startswith("http"):
        assert page.inner_html(f"{cell} .cell-source") == original_html
    page.unroute("**/assets/editor.js*")


def test_a_stale_edit_is_offered_not_applied(page):
    """The author changed the cell since the edit was saved: the reader chooses what happens."""
    open_without_python(page)
    cell = "#cell-causal-mask"
    original = shown_code(page, cell)
    page.evaluate("""() => localStorage.setItem('attention-course:cell:v1:' + document.body.dataset.page +
        ':causal-mask', JSON.stringify({base: 'an-older-source', code: 'print(\"旧的修改\")'}))""")
    page.reload()
    assert shown_code(page, cell) == original
    notice = page.locator(f"{cell} .cell-notice")
    # its text, laid out or not: a section far below the first screen is rendered only as the reader nears it
    # (content-visibility: auto), and innerText reads nothing from a section not rendered yet; the click below
    # scrolls to the notice and needs it visible
    assert "作者更新了" in notice.text_content()
    notice.get_by_role("button", name="恢复我的修改").click()
    assert shown_code(page, cell) == 'print("旧的修改")'
    assert not notice.is_visible()
    focus_code(page, cell)
    assert shown_code(page, cell) == 'print("旧的修改")'


def test_keyboard_can_leave_the_editor(page):
    open_without_python(page)
    cell = "#cell-causal-mask"
    focus_code(page, cell)
    page.keyboard.press("Home")
    before = page.locator(f"{cell} .cm-content").inner_text()
    page.keyboard.press("Tab")  # Tab indents: it belongs to the editor…
    assert page.evaluate("document.activeElement.classList.contains('cm-content')")
    assert page.locator(f"{cell} .cm-content").inner_text() != before
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")  # …but Esc, then Tab moves on: no keyboard trap
    assert not page.evaluate("document.activeElement.classList.contains('cm-content')")


def test_the_editor_replaces_the_static_code_without_moving_the_page(browser, http_base):
    """Same height with and without JavaScript: swapping the <pre> for CodeMirror causes no layout shift.
    The reader only scrolls towards the code: the editor comes at an idle moment, with no layout shift —
    also on a slow device (CPU throttled 4×), where CodeMirror used to highlight part of a cell a moment
    after showing it and re-render lines the reader already saw."""
    heights = {}
    for js in (False, True):
        context = browser.new_context(bypass_csp=True, java_script_enabled=js, viewport={"width": 1280, "height": 900})
        page = context.new_page()
        if js:
            context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": 4})
        page.add_init_script("""window.__shift = 0; new PerformanceObserver((list) => {
            for (const e of list.getEntries()) window.__shift += e.value;
        }).observe({type: 'layout-shift', buffered: true});""")
        page.goto(http_base + PAGE)
        if js:
            page.evaluate("window.__shift = 0")  # from here on: KaTeX's font swap at load is not ours
            page.locator(".code-cell").first.scroll_into_view_if_needed()
            wait_for_editors(page)
            page.wait_for_timeout(1500)  # and after: CodeMirror's deferred parsing used to land here
            assert page.evaluate("window.__shift") == 0
        # every cell measured laid out, also those in sections the reader has not reached (content-visibility: auto
        # leaves them unrendered, and an unrendered box has no height to compare)
        # (a <style> added by evaluate: add_style_tag waits for the sheet's load event, which a page without
        # JavaScript never delivers — the test hung there)
        page.evaluate(
            """(css) => { const style = document.createElement('style');
            style.textContent = css;
            document.head.append(style); }""",
            ALL_LAID_OUT_CSS,
        )
        heights[js] = page.eval_on_selector_all(
            ".code-cell .cell-editor", "els => els.map(e => e.getBoundingClientRect().height)"
        )
        if not js:
            assert page.locator(".code-cell .cell-source").first.inner_text().startswith("import numpy as np")
        context.close()
    assert len(heights[True]) == len(heights[False]) == len(CELL_IDS) + 3  # the cells and the 3 exercises' editors
    for static, editor in zip(heights[False], heights[True]):
        assert abs(static - editor) <= 2, heights
