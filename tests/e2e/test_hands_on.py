"""Module 08 in Chromium, as a learner goes through it: each exercise solved (the reference answer asked for and put
in the editor, then 检查) hands its function to the page; the assembled model runs; the induction training runs in
the browser until its threshold line (the loop ends there: the smallest configuration that still proves it), with a
live curve; the trained model's induction head is drawn; a second run stopped in the middle keeps Python and the
model, which the next cell uses. The page's own cells, over http (module 05's tests cover file:// for cells)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import _close_and_check, _open_context
from tests.e2e.test_cells import set_code, shown_code, wait_status

pytestmark = [pytest.mark.e2e]

PAGE = "module-08-build-transformer.html"
EXERCISES = ["softmax-backward", "embed", "causal-attention", "feed-forward", "norm-residual", "cross-entropy"]
BOOT = 120_000  # the runtime's first start on a busy 2-core machine
TRAINING = 180_000  # the induction threshold: ~10 s alone, slower beside the other test processes


@pytest.fixture(scope="module")
def hands_on(browser, http_base):
    context, page = _open_context(browser, http_base, viewport={"width": 1280, "height": 900})
    page.goto(http_base + PAGE)
    page.evaluate("localStorage.clear()")
    page.reload()
    yield page
    _close_and_check(context, page)


def solve(page, exercise: str) -> None:
    root = page.locator(f"#exercise-{exercise}")
    root.locator('[data-exercise-action="solution"]').click()
    root.locator('[data-exercise-action="solution-yes"]').click()
    root.locator('[data-exercise-action="use-solution"]').click()
    root.locator(".exercise-check").click()
    expect(root).to_have_attribute("data-verdict", "pass", timeout=BOOT)


def run(page, cell: str, timeout: float = 60_000) -> str:
    page.locator(f"#cell-{cell} [data-action='run']").click()
    status = wait_status(page, f"#cell-{cell}", "完成|出错|已停止", timeout)
    assert "完成" in status, f"{cell}: {status}: {page.text_content(f'#cell-{cell} .cell-log')}"
    return page.text_content(f"#cell-{cell} .cell-log")


def curve_step(page, cell: str) -> int:
    """The last step the cell's live curve shows (its status line), −1 before the first point."""
    text = page.text_content(f"#cell-{cell} .cell-widget[data-widget='training-curve']") or ""
    found = re.findall(r"第 (\d+) 步", text)
    return int(found[-1]) if found else -1


def test_the_learner_builds_a_transformer_trains_it_to_an_induction_head_and_a_stop_keeps_it(hands_on):
    page = hands_on
    for exercise in EXERCISES:
        solve(page, exercise)
    expect(page.locator("#exercise-embed .exercise-result")).to_contain_text("下面的代码单元现在用的就是你写的 embed")

    assert "logits： (1, 20, 12)" in run(page, "assemble")

    # the training loop, ending at its threshold line
    cell = "#cell-train-induction"
    original = shown_code(page, cell)
    line = next(x for x in original.split("\n") if "归纳头出现了" in x)
    indent = line[: len(line) - len(line.lstrip())]
    set_code(page, cell, original.replace(line, f"{line}\n{indent}break"))
    out = run(page, "train-induction", TRAINING)
    threshold = re.search(r"第 (\d+) 步：可以照抄的位置损失 ([\d.]+)，最强的归纳得分 ([\d.]+)", out)
    assert threshold, out
    assert float(threshold.group(2)) < 0.3 and float(threshold.group(3)) >= 0.5
    widget = page.locator(f"{cell} .cell-widget[data-widget='training-curve']")
    expect(widget).to_have_attribute("data-ready", "true")
    assert widget.locator("svg path").count() >= 3  # the three series
    assert 0 < curve_step(page, "train-induction") <= int(threshold.group(1))  # drawn while it trained

    # the trained model's induction head
    out = run(page, "induction-head")
    scores = [float(s) for s in re.search(r"归纳得分：\s*\[([^\]]+)\]", out).group(1).split()]
    assert max(scores) >= 0.5, out
    heatmap = page.locator("#cell-induction-head .cell-widget[data-widget='heatmap']")
    expect(heatmap).to_have_attribute("data-ready", "true")

    # 停止 in the middle of a run: Python is not restarted, the model is there for the next cell
    page.locator(f"{cell} [data-action='reset']").click()
    page.locator(f"{cell} [data-action='run']").click()
    page.wait_for_function(
        "sel => /第 ([2-9]\\d|\\d{3}) 步/.test(document.querySelector(sel + ' .cell-output').textContent)",
        arg=cell,
        timeout=TRAINING,
    )
    page.locator(f"{cell} [data-action='stop']").click()
    assert "已停止" in wait_status(page, cell, "已停止|完成|出错", 30_000)
    expect(page.locator(f"{cell} .cell-notice")).to_contain_text("没有重启")
    stopped_at = curve_step(page, "train-induction")
    assert 20 <= stopped_at < 299
    expect(page.locator(f"{cell} .cell-widget[data-widget='training-curve']")).to_contain_text("已停止")
    out = run(page, "induction-head")  # `params`, `gpt` and `task` survived the stop
    assert "最后一层各头的归纳得分" in out
