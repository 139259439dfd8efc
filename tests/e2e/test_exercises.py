"""Exercises in a real Chromium, over http and file://, on the real course (module 05's causal mask): a wrong attempt
shows the learner's message (expected vs got, the first differing element) and opens the first hint; the solution
opens after three failed checks; a right attempt passes, counts in the page's and the course's progress and is still
there on the next visit; 我想看答案 asks first and is recorded; 重置这道练习 forgets; a runaway attempt is stopped
like a cell. The Python runtime boots once per transport (module scope, in file order)."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import _close_and_check, _open_context
from tests.e2e.test_cells import set_code

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("exercises")]

PAGE = "module-05-attention.html"
EX = "#exercise-causal-mask"
CODE = f"{EX}-code"
BOOT = 120_000  # the runtime's first boot (from disk too) on a busy 2-core machine
SOLUTION = "import numpy as np\n\ndef causal_mask(n):\n    return np.tril(np.ones((n, n), dtype=bool))\n"


@pytest.fixture(scope="module", params=["http", "file"])
def ex_page(request, browser, http_base, file_base):
    base = http_base if request.param == "http" else file_base
    context, page = _open_context(browser, base, viewport={"width": 1280, "height": 900})
    page.goto(base + PAGE)
    page.evaluate("localStorage.clear()")
    page.reload()
    page.transport = request.param  # type: ignore[attr-defined]
    yield page
    _close_and_check(context, page)


def check(page, verdict: str) -> None:
    root = page.locator(EX)
    page.evaluate("sel => delete document.querySelector(sel).dataset.verdict", EX)
    root.locator(".exercise-check").click()
    expect(root).to_have_attribute("data-verdict", verdict, timeout=BOOT)


def record(page) -> dict:
    progress = json.loads(page.evaluate("localStorage.getItem('attention-course:progress') || '{}'"))
    return progress.get("pages", {}).get("module-05-attention", {}).get("exercises", {}).get("causal-mask", {})


def test_a_wrong_attempt_shows_a_learners_message_and_a_hint(ex_page):
    page = ex_page
    root = page.locator(EX)
    assert root.locator(".exercise-hints .exercise-hint").count() == 0
    check(page, "fail")
    result = root.locator(".exercise-result")
    expect(result).to_contain_text("✗ 通过了 0 / 3 项检查")
    assert result.get_attribute("role") == "status" and result.get_attribute("aria-live") == "polite"
    items = root.locator(".exercise-check-item")
    assert items.count() == 3
    first = items.nth(0).inner_text()
    assert "和 attention_core.causal_mask(4) 相同" in first
    assert "第一个不同的元素在 [0, 1]：期望 False，得到 True" in first and "Traceback" not in first
    assert "隐藏检查" in items.nth(2).inner_text()
    hint = root.locator(".exercise-hints .exercise-hint")
    expect(hint).to_have_count(1)
    assert hint.inner_text().startswith("提示 1/2")
    assert root.locator(".exercise-hint-btn").inner_text() == "提示 2/2"
    assert root.locator(".exercise-solution").is_hidden()
    assert record(page)["failures"] == 1 and record(page)["hints"] == 1


def test_the_solution_opens_after_three_failed_checks(ex_page):
    page = ex_page
    root = page.locator(EX)
    check(page, "fail")
    assert root.locator(".exercise-solution").is_hidden()
    expect(root.locator(".exercise-result")).to_contain_text("再检查 1 次没通过，参考答案就会打开")
    check(page, "fail")
    expect(root.locator(".exercise-solution")).to_be_visible()
    assert "np.tril" in root.locator(".exercise-solution").inner_text()
    expect(root.locator(".exercise-result")).to_contain_text("参考答案已打开")


def test_a_right_attempt_passes_and_counts_in_progress(ex_page):
    page = ex_page
    root = page.locator(EX)
    set_code(page, CODE, SOLUTION)
    check(page, "pass")
    expect(root.locator(".exercise-result")).to_have_text(re.compile(r"✓ 全部 3 项检查通过"))
    notes = root.locator(".exercise-note").all_inner_texts()
    assert "causal_mask(4)：形状 (4, 4)，[True, False, False, False, True, True, …] ✓" in notes
    assert record(page)["passed"] is True
    expect(root.locator(".exercise-state")).to_have_text("✓ 已通过")
    expect(page.locator(".exercise-page-progress")).to_have_text("本页练习：通过 1 / 3")
    # …and on the next visit, and in the course's progress on the index
    page.reload()
    expect(page.locator(f"{EX} .exercise-state")).to_have_text("✓ 已通过", timeout=30_000)
    expect(page.locator(f"{EX} .exercise-solution")).to_be_visible()
    page.goto(page.base + "index.html")
    expect(page.locator("[data-progress-exercises]")).to_have_text(re.compile(r"练习通过 1 / \d+ 道"))
    page.goto(page.base + PAGE)


def test_asking_for_the_solution_is_confirmed_and_recorded_and_reset_forgets(ex_page):
    page = ex_page
    root = page.locator("#exercise-split-merge-heads")
    root.locator(".exercise-solution-btn").click()
    confirm = root.locator(".exercise-confirm")
    expect(confirm).to_be_visible()
    assert "记在你的学习进度里" in confirm.inner_text()
    confirm.get_by_role("button", name="再想想").click()
    assert root.locator(".exercise-solution").is_hidden()
    root.locator(".exercise-solution-btn").click()
    confirm.get_by_role("button", name="确定，看答案").click()
    expect(root.locator(".exercise-solution")).to_be_visible()
    expect(root.locator(".exercise-state")).to_contain_text("看过答案")
    root.locator(".exercise-reset-btn").click()
    expect(root.locator(".exercise-solution")).to_be_hidden()
    expect(root.locator(".exercise-state")).to_have_text("还没有检查过")


def test_a_runaway_attempt_is_stopped_like_a_cell(ex_page):
    page = ex_page
    if page.transport != "http":
        pytest.skip("Stop is the runtime's, whatever the transport; once is enough")
    root = page.locator("#exercise-scaled-dot-product")
    set_code(page, "#exercise-scaled-dot-product-code", "while True:\n    pass\n")
    root.locator(".exercise-check").click()
    stop = root.locator(".cell-stop")
    expect(stop).to_be_visible(timeout=BOOT)
    expect(root).to_have_attribute("data-checking", "true", timeout=BOOT)
    stop.click()
    expect(root).to_have_attribute("data-verdict", "stopped", timeout=30_000)
    expect(root.locator(".cell-status")).to_have_text("已停止")
    expect(root.locator(".exercise-result")).to_contain_text("已停止")


@pytest.mark.parametrize("width", [1280, 390])
def test_a_used_exercise_has_no_serious_accessibility_violation_and_fits_a_phone(browser, http_base, width):
    """After a failed check (the verdict, a hint) and with the solution asked for: axe in light and dark, and
    nothing wider than the screen at 390 px."""
    from tests.e2e.test_accessibility import violations_in_both_schemes

    context, page = _open_context(browser, http_base, viewport={"width": width, "height": 900})
    try:
        page.goto(http_base + PAGE)
        root = page.locator("#exercise-split-merge-heads")
        root.scroll_into_view_if_needed()
        root.locator(".exercise-check").click()
        expect(root).to_have_attribute("data-verdict", "fail", timeout=BOOT)
        root.locator(".exercise-solution-btn").click()
        root.get_by_role("button", name="确定，看答案").click()
        expect(root.locator(".exercise-solution")).to_be_visible()
        root.locator(".exercise-public summary").click()
        found = violations_in_both_schemes(page, ["#exercise-split-merge-heads"])
        assert found == [], found
        if width == 390:
            overflow = page.evaluate(
                # against 390, not innerWidth: a phone's layout viewport widens to content that is too wide
                """([sel, width]) => [...document.querySelectorAll(sel + ' *')].filter((e) => {
                  const r = e.getBoundingClientRect();
                  const scrolls = e.closest('pre, .cm-editor, .katex-display');  // scroll inside their own box
                  return r.width && (r.right > width + 1 || r.left < -1) && !scrolls;
                }).map((e) => e.className)""",
                ["#exercise-split-merge-heads", width],
            )
            assert overflow == [], overflow
    finally:
        _close_and_check(context, page)
