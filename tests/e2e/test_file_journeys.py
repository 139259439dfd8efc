"""The shared course build opened from disk (file://), where the transport is what is tested: one journey per kind of
page — the index, a module, an explainer. Each loads cleanly (no console error, nothing from outside: the page
checks), has its math typeset with exactly the KaTeX fonts it preloads (a preload that does not match its request
from disk would fetch a font twice or log an error), and its widgets mount; the module's journey runs a code cell
in the browser's Python, whose runtime comes from disk through the wrapper scripts. (Every other browser test reads
the same build over http.)"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import mount_all_widgets
from tests.e2e.test_layout_shift import assert_preloads_are_the_requests, font_requests_after

pytestmark = pytest.mark.e2e

RUNTIME_TIMEOUT = 100_000  # the runtime's first boot from disk on a busy 2-core machine


def open_from_disk(page, name: str) -> None:
    requested, preloaded = font_requests_after(page, page.base + name)
    assert page.url.startswith("file://")
    if page.locator(".katex").count():
        assert preloaded, f"{name}: formulas but no font preloads"
        assert page.locator(".math-error").count() == 0
    assert_preloads_are_the_requests(requested, preloaded, f"{name} from disk")


def test_the_index_from_disk(file_page):
    page = file_page
    open_from_disk(page, "index.html")
    assert page.locator(".course-path > .card").count() >= 3
    page.locator('a[href="module-05-attention.html"]').first.click()
    page.wait_for_url(re.compile(r"module-05-attention\.html$"))
    assert page.locator("h1").count() == 1


def test_a_module_from_disk_math_widgets_and_a_cell(file_page):
    page = file_page
    open_from_disk(page, "module-05-attention.html")
    assert page.locator(".katex").count() > 10
    assert mount_all_widgets(page) >= 3
    cell = page.locator(".code-cell").filter(has=page.locator(".cell-run")).first  # the page's first: it needs no other
    built = cell.locator(".cell-log").text_content()
    cell.locator(".cell-run").click()  # the first run also starts the Python runtime, from disk
    output = cell.locator('.cell-output[data-origin="browser"]')
    expect(output).to_have_count(1, timeout=RUNTIME_TIMEOUT)
    expect(cell.locator(".cell-status")).to_have_text(re.compile("完成"), timeout=RUNTIME_TIMEOUT)
    assert cell.locator(".cell-log").text_content() == built  # the browser prints what the build printed


def test_an_explainer_from_disk_math_and_widgets(file_page):
    page = file_page
    open_from_disk(page, "attention-explained.html")
    assert page.locator(".katex").count() > 5
    assert mount_all_widgets(page) >= 3
    root = page.locator('.widget[data-widget="query-focus"] .widget-body')
    before = root.locator(".bars").inner_text()
    root.locator(".qf-token", has_text="小红").click()
    expect(root.locator(".bars")).not_to_have_text(before)
