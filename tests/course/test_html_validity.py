"""The built pages are valid HTML: the Nu Html Checker (npm `vnu-jar`, pinned in package.json; it runs on the
machine's Java, which `make browser` installs where it can: scripts/ensure_browser.py) finds no error in any page;
and where screen readers care (ARIA in HTML), no accessible name on an element whose role may not be named (a bare
<pre>, <div>, <span>, <p>, <code>), no unknown ids in ARIA references, and every <section> of the course — quizzes
and code cells included — has a heading or a name that comes from a heading."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

from tests.conftest import ROOT

VNU_JAR = ROOT / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"


def nu_html_checker_errors(pages: list[Path]) -> list[str]:
    """The checker's errors in `pages` (one run of the checker for all of them), each as `file:line: message`."""
    java = shutil.which("java")
    assert java, "no Java on PATH: the Nu Html Checker runs on it (apt-get install default-jre-headless)"
    assert VNU_JAR.is_file(), f"{VNU_JAR} is missing: run npm ci (vnu-jar is a dev dependency)"
    run = subprocess.run(
        [java, "-jar", str(VNU_JAR), "--format", "json", "--stdout", "--exit-zero-always", *map(str, pages)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return [
        f"{Path(m.get('url', '?').removeprefix('file:')).name}:{m.get('lastLine', '?')}: {m['message']}"
        for m in json.loads(run.stdout)["messages"]
        # an error, or the checker failing to read a page ("non-document-error": then nothing in it was checked)
        if m["type"] in ("error", "non-document-error")
    ]


def test_every_page_is_valid_html_by_the_nu_html_checker(course_site: Path) -> None:
    pages = sorted(course_site.rglob("*.html"))
    assert len(pages) >= 3
    assert nu_html_checker_errors(pages) == []


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
