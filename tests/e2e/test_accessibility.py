"""axe-core (npm, pinned in package.json) in every built page: light and dark, 1280 and 390 px, as loaded and
again (the widgets and quizzes, which are what changed) after every widget has been used and a quiz answered;
any serious or critical violation fails.

Each page is loaded and used once per width and checked in both colour schemes, switched in place as a reader's
system does (every colour is a CSS variable; the one widget that draws on a canvas redraws on the change)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT
from tests.e2e.conftest import mount_all_widgets, wait_frames

pytestmark = pytest.mark.e2e

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def built_pages(built_site) -> list[str]:
    return sorted(p.name for p in built_site.glob("*.html"))


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


@pytest.mark.parametrize("width", [1280, 390])
def test_no_serious_accessibility_violation_anywhere(browser, http_base, built_site, width):
    context = browser.new_context(
        viewport={"width": width, "height": 900}, bypass_csp=True
    )  # axe is injected as an inline script; test_csp.py tests the policy
    page = context.new_page()
    problems = {}
    for name in built_pages(built_site):
        page.emulate_media(color_scheme="light")
        page.goto(http_base + name)
        mount_all_widgets(page)
        found = violations_in_both_schemes(page)
        page.emulate_media(color_scheme="light")
        use_everything(page)
        found += violations_in_both_schemes(page, USED_PARTS)
        if found:
            problems[name] = found
    context.close()
    assert not problems, json.dumps(problems, ensure_ascii=False, indent=1)[:6000]
