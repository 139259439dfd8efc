"""axe-core (npm, pinned in package.json) in every built page, with every lazily rendered box laid out: as loaded
(the widgets' static fallbacks), and again in the widgets and quizzes (what changed) once every widget has drawn and
been used and a quiz answered. Any serious or critical violation of the WCAG 2.0–2.2 A/AA rules and axe's best
practices fails; WCAG 2.2's target size (24 × 24 CSS px, or spacing) included, which axe runs only when asked for.

At 1280 px every rule runs; at 390 px the rules that read sizes and places (LAYOUT_RULES). Each state is checked in
both colour schemes, switched in place as a reader's system does (every colour is a CSS variable; the one widget that
draws on a canvas redraws on the change). One browser page per width goes through all the pages; each width is a test
of its own (two workers split them)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import CONTENT, ROOT
from tests.e2e.conftest import ALL_LAID_OUT_CSS, _close_and_check, _open_context, mount_all_widgets, wait_frames

pytestmark = pytest.mark.e2e

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")

# The rule sets: WCAG 2.0, 2.1 and 2.2 at A and AA, and axe's best practices. `target-size` (wcag22aa) is one axe
# does not run unless asked for.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]

# What a colour scheme can change: the rules that read colours (the rest see the same DOM in both schemes).
COLOUR_RULES = ["color-contrast", "link-in-text-block"]


# What a narrow window can change: the rules that read sizes, overflow and where boxes are (the rest see the same DOM
# at every width, and run at 1280 px).
LAYOUT_RULES = ["target-size", "scrollable-region-focusable", "color-contrast", "link-in-text-block"]


# What using a page changes: its widgets and quizzes (use_everything below); the prose around them stays as loaded.
USED_PARTS = [".widget", ".quiz"]


def axe_violations(page, rules: list[str] | None = None, parts: list[str] | None = None) -> list[dict]:
    """Serious and critical violations of the rules of TAGS, or of `rules` only, in the page or in its `parts`."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        """async ([rules, parts, tags]) => {
      const runOnly = rules ? { type: 'rule', values: rules } : { type: 'tag', values: tags };
      const options = { resultTypes: ['violations'], runOnly };
      const context = parts ? { include: parts.filter((p) => document.querySelector(p)).map((p) => [p]) } : document;
      if (parts && !context.include.length) return [];
      const r = await axe.run(context, options);
      return r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.slice(0, 5).map(n => ({ target: n.target.join(' '), summary: n.failureSummary })) }));
    }""",
        [rules, parts, TAGS],
    )
    return [v for v in result if v["impact"] in SERIOUS]


def violations_in_both_schemes(page, parts: list[str] | None = None, rules: list[str] | None = None) -> list[dict]:
    """Every rule (or `rules`) in the light scheme, the colour rules again in the dark one; the page is left light."""
    found = []
    for scheme, run in (("light", rules), ("dark", COLOUR_RULES)):
        page.emulate_media(color_scheme=scheme)
        wait_frames(page)
        found += [{"scheme": scheme, **v} for v in axe_violations(page, run, parts)]
    page.emulate_media(color_scheme="light")
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


def check_page(page, url: str, rules: list[str] | None = None) -> list[dict]:
    """The violations in one page (of every rule, or of `rules`): as loaded (the widgets' static fallbacks), and with
    every widget drawn and used (what a reader's clicks change; the widgets as drawn are in that state too)."""
    page.goto(url)
    # every box laid out, also those the theme renders only near the view (content-visibility: auto): some checks
    # skip a box that is not; scroll-hint.js's ResizeObserver then marks the boxes that scroll (two frames)
    page.add_style_tag(content=ALL_LAID_OUT_CSS)
    wait_frames(page)
    found = [{"state": "loaded", **v} for v in violations_in_both_schemes(page, rules=rules)]
    mount_all_widgets(page)  # what drawing changes: the widgets (and the scroll hints of their boxes)
    use_everything(page)
    wait_frames(page)
    found += [{"state": "drawn and used", **v} for v in violations_in_both_schemes(page, USED_PARTS, rules)]
    return found


# One test per page and width: the pages are checked side by side by the run's test processes (one test going
# through every page was the suite's longest, 3.5 minutes alone at 1280 px).
@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("slug", PAGES)
def test_no_serious_accessibility_violation_anywhere(browser, http_base, built_site, width, slug):
    assert (built_site / f"{slug}.html").is_file(), f"not built: {slug}"
    # axe is injected as an inline script (bypass_csp, the default here); test_csp.py tests the policy
    context, page = _open_context(browser, http_base, viewport={"width": width, "height": 900})
    try:
        page.emulate_media(color_scheme="light")
        rules = LAYOUT_RULES if width < 1280 else None
        found = [{"page": slug, **v} for v in check_page(page, http_base + f"{slug}.html", rules)]
    finally:
        _close_and_check(context, page)
    assert not found, json.dumps(found, ensure_ascii=False, indent=1)[:8000]
