"""examples/minimal, the engine's second course, in the browser, over http and from disk (file://): built by the
engine alone (no model, no corpus: tests/engine/test_minimal_example.py checks that), its page typesets its formulas
with the KaTeX stylesheet, mounts its own widget, which answers a slider, checks a quiz answer, and runs its code
cell in the browser's Python, which prints what the build printed."""

from __future__ import annotations

import re

import pytest
import yaml
from playwright.sync_api import expect

from tests.conftest import MINIMAL
from tests.e2e.conftest import DESKTOP, _close_and_check, _open_context, serve

pytestmark = pytest.mark.e2e

RUNTIME_TIMEOUT = 100_000  # the runtime's first start, from disk too, on a busy 2-core machine


@pytest.fixture(scope="module", params=["http", "file"])
def minimal_base(request, minimal_site) -> str:
    if request.param == "file":
        yield minimal_site.resolve().as_uri() + "/"
        return
    server = serve(minimal_site)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def authored_quiz() -> dict:
    text = (MINIMAL / "softmax.md").read_text(encoding="utf-8")
    return yaml.safe_load(re.search(r"```\{quiz\}\n(.*?)```", text, re.S).group(1))


def test_the_minimal_courses_page_works(browser, minimal_base):
    context, page = _open_context(browser, minimal_base, **DESKTOP)
    try:
        page.goto(minimal_base + "softmax.html")
        assert page.url.startswith(minimal_base)

        # math: typeset at build time, drawn with KaTeX's own stylesheet and fonts
        assert page.locator(".katex").count() >= 3 and page.locator(".math-error").count() == 0
        font = page.locator(".katex-display .katex").first.evaluate("e => getComputedStyle(e).fontFamily")
        assert "KaTeX_Main" in font, font

        # the course's own widget mounts and follows its slider
        widget = page.locator('.widget[data-widget="softmax3"]')
        widget.scroll_into_view_if_needed()
        expect(widget).to_have_attribute("data-ready", "true", timeout=30_000)
        weights = widget.locator(".bar-value")
        before = weights.all_inner_texts()
        assert len(before) == 3 and before[0] != before[2]
        widget.locator('input[type="range"]').last.fill("5")
        expect(weights.last).not_to_have_text(before[2])

        # the quiz checks an answer (its options are shuffled at build time: found by their authored index)
        quiz = authored_quiz()
        root = page.locator(f"#quiz-{quiz['id']}")
        right = next(i for i, o in enumerate(quiz["options"]) if o.get("correct"))
        root.locator(f'.quiz-option[data-index="{right}"] input').check()
        root.locator(".quiz-submit").click()
        expect(root.locator(f'.quiz-option[data-index="{right}"]')).to_have_class(re.compile("is-correct"))

        # the code cell runs in the browser's Python and prints what the build printed
        cell = page.locator(".code-cell").filter(has=page.locator(".cell-run")).first
        built = cell.locator(".cell-log").text_content()
        assert "[0.659, 0.242, 0.099]" in built
        cell.locator(".cell-run").click()
        expect(cell.locator('.cell-output[data-origin="browser"]')).to_have_count(1, timeout=RUNTIME_TIMEOUT)
        expect(cell.locator(".cell-status")).to_have_text(re.compile("完成"), timeout=RUNTIME_TIMEOUT)
        assert cell.locator(".cell-log").text_content() == built

        # the exercise's output keeps its own label once the cells' controller is in (its starter printed nothing:
        # there is no "预先算好的输出", and no stale one when the reader edits it)
        exercise = page.locator("#exercise-softmax-list")
        expect(exercise.locator(".cell-output-label")).to_have_text("检查输出")
        exercise.locator(".cell-editor").click()  # like a reader: the static code asks for the editor
        expect(exercise.locator(".cm-content")).to_be_focused()
        page.keyboard.press("ControlOrMeta+End")
        page.keyboard.type("  # 改一下")
        expect(exercise.locator(".cell-modified")).to_be_visible()
        expect(exercise.locator(".cell-output-label")).to_have_text("检查输出")
        assert exercise.locator(".cell-output[data-stale]").count() == 0
    finally:
        _close_and_check(context, page)
