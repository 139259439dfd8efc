"""Every page of the real course in Chromium: loads cleanly, math typeset, navigation works. (Over file://:
test_file_journeys.py; the screenshots at desktop and phone widths: test_screenshots.py.)"""

from __future__ import annotations

import re

import pytest
import yaml

from tests.conftest import ROOT
from tests.e2e.conftest import ALL_LAID_OUT_CSS

pytestmark = pytest.mark.e2e

PAGES = sorted(p.stem for p in (ROOT / "content").glob("*.md"))
FENCE_RE = re.compile(r"^(`{3,}|~{3,})(.*?)\n(.*?)^\1[ \t]*$", re.M | re.S)


def count_formulas(markdown: str) -> int:
    """Count formulas independently of the build: `$$…$$` blocks and `$…$` spans in prose, quiz YAML and an
    exercise's title and task (its hints and solution are not on the page until opened), ignoring code fences (code
    cells, plain code)."""
    markdown = markdown.split("---", 2)[2] if markdown.startswith("---") else markdown
    kept = []
    pos = 0
    for m in FENCE_RE.finditer(markdown):
        kept.append(markdown[pos : m.start()])
        if m.group(2).strip().startswith("{quiz}"):
            kept.append(m.group(3))
        if m.group(2).strip().startswith("{exercise}"):
            kept.append(m.group(2) + "\n" + re.split(r"^---[ \t]+[A-Za-z-]+[ \t]*$", m.group(3), flags=re.M)[0])
        pos = m.end()
    kept.append(markdown[pos:])
    text = re.sub(r"`[^`\n]*`", "", "".join(kept))  # inline code
    text = text.replace("\\$", "")
    display = len(re.findall(r"\$\$.+?\$\$", text, flags=re.S))
    text = re.sub(r"\$\$.+?\$\$", "", text, flags=re.S)
    inline = len(re.findall(r"\$[^$\n]+?\$", text))
    return display + inline


def page_title(slug: str) -> str:
    text = (ROOT / "content" / f"{slug}.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---", 2)[1])["title"]


@pytest.mark.parametrize("slug", PAGES)
def test_page_loads_with_all_math_typeset(page, slug):
    page.goto(page.base + f"{slug}.html")
    page.wait_for_load_state("load")
    expected = count_formulas((ROOT / "content" / f"{slug}.md").read_text(encoding="utf-8"))
    assert page.locator(".katex").count() == expected
    assert page.locator(".math-error").count() == 0
    body_text = page.locator("main").inner_text()
    assert "$$" not in body_text
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    assert page.title().startswith(page_title(slug))
    # KaTeX fonts really load (from the site itself).
    if expected:
        # every section rendered: a page whose first screen has no formula asks for KaTeX's fonts only when a
        # section with one nears the viewport (content-visibility: auto)
        page.add_style_tag(content=ALL_LAID_OUT_CSS)
        page.wait_for_function("[...document.fonts].some(f => f.family.includes('KaTeX') && f.status === 'loaded')")


def test_index_prev_next_navigation(page):
    page.goto(page.base + "index.html")
    # The index lists modules in order and marks planned ones.
    cards = page.locator(".outline .card")
    assert cards.count() >= 7
    planned = [x["slug"] for x in yaml.safe_load((ROOT / "content" / "site.yml").read_text("utf-8"))["planned"]]
    assert page.locator(".card-planned .badge-soon").count() == len(planned)  # what site.yml still plans
    page.get_by_role("link", name=re.compile("注意力机制：Transformer 的灵魂")).first.click()
    page.wait_for_url(re.compile(r"module-05-attention\.html$"))
    assert page.locator("h1").inner_text() == page_title("module-05-attention")
    # Module 05's neighbours (modules 04 and 06): a written one is a link, a planned one 即将推出, not a link.
    nav = page.get_by_role("navigation", name="上一篇与下一篇")
    neighbours = ["module-04-bigram-mlp", "module-06-transformer"]
    assert nav.locator("a").count() == sum(n not in planned for n in neighbours)
    assert nav.get_by_text("即将推出").count() == sum(n in planned for n in neighbours)
    if "module-06-transformer" not in planned:
        assert nav.locator('a[href="module-06-transformer.html"]').count() == 1
    # The explainer links onwards to module 05.
    page.goto(page.base + "attention-explained.html")
    page.get_by_role("navigation", name="上一篇与下一篇").get_by_role("link").first.click()
    page.wait_for_url(re.compile(r"module-05-attention\.html$"))
    page.get_by_role("link", name=re.compile("注意力机制 · 交互式课程")).first.click()
    page.wait_for_url(re.compile(r"index\.html$"))


def test_toc_links_jump_to_sections(page):
    page.goto(page.base + "module-05-attention.html")
    toc = page.get_by_role("navigation", name="本页目录")
    links = toc.get_by_role("link")
    assert links.count() >= 9
    last = links.nth(links.count() - 1)
    target = last.get_attribute("href")
    last.click()
    assert page.evaluate("decodeURIComponent(location.hash)") == target
    assert page.evaluate(f"document.getElementById({target[1:]!r}).getBoundingClientRect().top") < 200
