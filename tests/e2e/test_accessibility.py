"""axe-core (npm, pinned in package.json) in every built page: light and dark, 1280 and 390 px, as loaded and
again (the widgets and quizzes, which are what changed) after every widget has been used and a quiz answered;
any serious or critical violation fails.

Each page is loaded and used once per width and checked in both colour schemes, switched in place as a reader's
system does (every colour is a CSS variable; the one widget that draws on a canvas redraws on the change)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import CONTENT, ROOT
from tests.e2e.conftest import _close_and_check, _open_context, mount_all_widgets, read_through, wait_frames

pytestmark = pytest.mark.e2e

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


# What a colour scheme can change: the rules that read colours (the rest see the same DOM in both schemes).
COLOUR_RULES = ["color-contrast", "link-in-text-block"]


# What using a page changes: its widgets and quizzes (use_everything below); the prose around them stays as loaded.
USED_PARTS = [".widget", ".quiz"]


def axe_violations(page, rules: list[str] | None = None, parts: list[str] | None = None) -> list[dict]:
    """Serious and critical violations of every axe rule, or of `rules` only, in the page or in its `parts`."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        """async ([rules, parts]) => {
      const options = { resultTypes: ['violations'] };
      if (rules) options.runOnly = { type: 'rule', values: rules };
      const context = parts ? { include: parts.filter((p) => document.querySelector(p)).map((p) => [p]) } : document;
      if (parts && !context.include.length) return [];
      const r = await axe.run(context, options);
      return r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.slice(0, 5).map(n => ({ target: n.target.join(' '), summary: n.failureSummary })) }));
    }""",
        [rules, parts],
    )
    return [v for v in result if v["impact"] in SERIOUS]


def violations_in_both_schemes(page, parts: list[str] | None = None) -> list[dict]:
    """Every rule in the light scheme, the colour rules again in the dark one."""
    found = []
    for scheme, rules in (("light", None), ("dark", COLOUR_RULES)):
        page.emulate_media(color_scheme=scheme)
        wait_frames(page)
        found += [{"scheme": scheme, **v} for v in axe_violations(page, rules, parts)]
    return found


def use_everything(page) -> None:
    """Open each widget's states (its buttons, its details) and answer a quiz wrongly, then ask for the answer."""
    for widget in page.locator(".widget .widget-body").all():
        buttons = widget.locator("button:visible:enabled")  # a disabled one (上一站 at the first stage) cannot be used
        for k in range(min(buttons.count(), 4)):
            buttons.nth(k).click()
        for details in widget.locator("details").all():
            details.evaluate("d => d.open = true")
        slider = widget.locator("input[type=range]")
        if slider.count():
            slider.first.focus()
            page.keyboard.press("End")
    quiz = page.locator(".quiz").first
    if quiz.count():
        quiz.locator(".quiz-option input").last.check()
        quiz.locator(".quiz-submit").click()
        reveal = quiz.locator(".quiz-reveal")
        if reveal.is_visible():
            reveal.click()


PAGES = sorted(p.stem for p in CONTENT.glob("*.md")) + ["404"]


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("slug", PAGES)
def test_no_serious_accessibility_violation_anywhere(browser, http_base, built_site, slug, width):
    assert (built_site / f"{slug}.html").is_file(), f"{slug}.html was not built"
    # axe is injected as an inline script (bypass_csp, the default here); test_csp.py tests the policy
    context, page = _open_context(browser, http_base, viewport={"width": width, "height": 900})
    try:
        page.emulate_media(color_scheme="light")
        page.goto(http_base + f"{slug}.html")
        # read through once, as a reader does: every section laid out (content-visibility: auto), each box measured
        # by scroll-hint.js (an unmeasured one is not focusable yet), then every widget drawn
        read_through(page)
        mount_all_widgets(page)
        found = violations_in_both_schemes(page)
        page.emulate_media(color_scheme="light")
        use_everything(page)
        found += violations_in_both_schemes(page, USED_PARTS)
    finally:
        _close_and_check(context, page)
    assert not found, json.dumps(found, ensure_ascii=False, indent=1)[:6000]
