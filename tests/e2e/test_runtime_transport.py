"""The runtime's one transport (builder/runtime/wrappers.py, builder/runtime/browser/transport.js) on the real course
page: a corrupted wrapper script fails the start — the reader is told, in Chinese, that Python could not start and
what to do; the file and the sha256 mismatch go to the console for the developer — over http and file://, instead of
running other bytes or hanging."""

from __future__ import annotations

import json
import shutil

import pytest

from builder.bundle import browser_data_prefix
from tests.e2e.conftest import serve
from tests.e2e.test_python_runtime import corrupt_wrapper

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("cells")]

PAGE = "module-05-attention.html"


@pytest.mark.parametrize("transport", ["http", "file"])
@pytest.mark.parametrize("victim", ["pyodide.asm.wasm", "numpy"])
def test_a_corrupted_wrapper_is_reported_to_the_reader(browser, built_site, tmp_path, transport, victim):
    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    py_dir = site / "assets" / "python"
    text = (py_dir / "runtime-index.js").read_text("utf-8")
    index = json.loads(text[len(browser_data_prefix("python", "index")) :].rstrip().rstrip(";"))
    entry = next(a for a in index["assets"] if a["name"] == victim or a["name"].startswith(victim + "-"))
    corrupt_wrapper(py_dir / entry["wrappers"][-1])  # the last chunk: the whole payload loads, then fails its hash
    server = serve(site) if transport == "http" else None
    base = f"http://127.0.0.1:{server.server_address[1]}/" if server else site.as_uri() + "/"
    context = browser.new_context(locale="zh-CN", service_workers="block", bypass_csp=True)
    try:
        page = context.new_page()
        console = []
        page.on("console", lambda m: console.append(m.text))
        page.set_default_timeout(60_000)
        page.goto(base + PAGE)
        cell = ".code-cell"
        page.click(f"{cell} [data-action='run']")
        # fails within the load, well before any test timeout: never a hang
        page.wait_for_function(
            "(sel) => /无法运行/.test(document.querySelector(sel + ' .cell-status').textContent)",
            arg=cell,
            timeout=60_000,
        )
        status = page.text_content(f"{cell} .cell-status")
        bar = page.text_content(".cells-bar-status")
        stop_hidden = page.eval_on_selector(f"{cell} [data-action='stop']", "b => b.hidden || b.disabled")
        retry_state = page.evaluate("Course.python.getRuntime().state")
    finally:
        context.close()
        if server:
            server.shutdown()
    assert status == "无法运行", status
    assert "Python 运行环境没能启动" in bar and "再点一次" in bar, bar  # what it means and what to do
    detail = "\n".join(console)
    assert f"{entry['name']}: sha256 " in detail and f"expected {entry['sha256']}" in detail, detail
    assert stop_hidden  # nothing is left running
    assert retry_state == "idle"  # a later 运行 starts a fresh load
