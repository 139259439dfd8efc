"""axe-core (npm, pinned in package.json) in every built page: light and dark, 1280 and 390 px, as loaded and
again after every widget has been used and a quiz answered; any serious or critical violation fails."""
from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import mount_all_widgets

from tests.conftest import ROOT

pytestmark = pytest.mark.e2e

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def built_pages(built_site) -> list[str]:
    return sorted(p.name for p in built_site.glob("*.html"))


def axe_violations(page) -> list[dict]:
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    result = page.evaluate("""async () => {
      const r = await axe.run(document, { resultTypes: ['violations'] });
      return r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.slice(0, 5).map(n => ({ target: n.target.join(' '), summary: n.failureSummary })) }));
    }""")
    return [v for v in result if v["impact"] in SERIOUS]


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


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
def test_no_serious_accessibility_violation_anywhere(browser, http_base, built_site, scheme, width):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme,
                                  bypass_csp=True)  # axe is injected as an inline script; test_csp.py tests the policy
    page = context.new_page()
    problems = {}
    for name in built_pages(built_site):
        page.goto(http_base + name)
        mount_all_widgets(page)
        found = axe_violations(page)
        use_everything(page)
        found += axe_violations(page)
        if found:
            problems[name] = found
    context.close()
    assert not problems, json.dumps(problems, ensure_ascii=False, indent=1)[:6000]
