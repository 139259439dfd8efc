"""The built pages are valid HTML where validators and screen readers care (ARIA in HTML): no accessible name on
an element whose role may not be named (a bare <pre>, <div>, <span>, <p>, <code>), no unknown ids in ARIA
references, and every <section> of the course — quizzes and code cells included — has a heading or a name
that comes from a heading."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

# Elements whose implicit role is generic (or paragraph / code): aria-label / aria-labelledby are prohibited
# on them unless an explicit role allows a name.
UNNAMEABLE = {"pre", "div", "span", "p", "code", "b", "i", "em", "strong", "small", "kbd", "samp", "var", "sub", "sup"}
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self.ids: set[str] = set()
        self.references: list[tuple[str, str]] = []
        self.sections: list[dict] = []  # open <section>s: {"line", "heading"}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        line = self.getpos()[0]
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("aria-labelledby", "aria-describedby", "aria-controls"):
            for ref in (a.get(key) or "").split():
                self.references.append((f"line {line}: <{tag} {key}>", ref))
        if tag in UNNAMEABLE and ("aria-label" in a or "aria-labelledby" in a) and "role" not in a:
            self.problems.append(f"line {line}: <{tag} class={a.get('class')!r}> has an accessible name but no role")
        if tag in HEADINGS:
            for section in self.sections:
                section["heading"] = True
        if tag == "section":
            self.sections.append({"line": line, "heading": False, "class": a.get("class")})

    def handle_endtag(self, tag):
        if tag == "section" and self.sections:
            section = self.sections.pop()
            if not section["heading"]:
                self.problems.append(f"line {section['line']}: <section class={section['class']!r}> has no heading")


def test_every_page_is_valid_where_assistive_technology_cares(course_site: Path) -> None:
    problems = []
    pages = sorted(course_site.glob("*.html"))
    assert len(pages) >= 3
    for page in pages:
        checker = Checker()
        checker.feed(page.read_text(encoding="utf-8"))
        problems += [f"{page.name} {p}" for p in checker.problems]
        problems += [
            f"{page.name} {where} names unknown id {ref!r}"
            for where, ref in checker.references
            if ref not in checker.ids
        ]
    assert problems == []
