"""Every syntax extension's fixture file, through one runner (mdit-py-plugins' `read_fixture_file` style).

A case is: title / `.` / Markdown / `.` / expected / `.`. The expected block is exact: one line
`ERROR path:line: message [code]` (or `WARNING …`) per reported problem, in the order the build prints them (a message may
span several lines), then the exact HTML. So a case fails on any changed byte of the HTML, on a missing,
changed or extra problem. Every extension must have its fixture file: a missing one fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it.utils import read_fixture_file

from tests.plugin_harness import render_snippet

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXTENSIONS = [
    "callout",
    "code_cell",
    "figure",
    "glossary",
    "headings",
    "images",
    "links",
    "math",
    "math_nobreak",
    "quiz",
    "raw_html",
    "sections",
    "widget",
    "widget_quote",
]


def canonical(html: str, problems: list[str]) -> str:
    lines = [f"WARNING {p.replace(': warning: ', ': ', 1)}" if ": warning: " in p else f"ERROR {p}" for p in problems]
    return ("".join(f"{line}\n" for line in lines) + html).rstrip("\n")


def test_every_extension_has_its_fixture_file() -> None:
    modules = sorted(
        p.stem
        for p in (FIXTURES.parent.parent / "builder" / "markdown").glob("*.py")
        if p.stem not in ("__init__", "parser", "directive", "highlight")
    )
    assert modules == sorted(EXTENSIONS)  # a new extension gets a fixture file and a place in this list
    for name in EXTENSIONS:
        assert (FIXTURES / f"{name}.md").is_file(), f"tests/fixtures/{name}.md is missing"
        assert read_fixture_file(FIXTURES / f"{name}.md"), f"tests/fixtures/{name}.md has no case"


def cases():
    for name in EXTENSIONS:
        path = FIXTURES / f"{name}.md"
        for line, title, source, expected in read_fixture_file(path) if path.is_file() else []:
            yield pytest.param(source, expected, id=f"{name}.md:{line + 1}:{title}")


@pytest.mark.parametrize("source,expected", list(cases()))
def test_fixture(source: str, expected: str) -> None:
    html, problems = render_snippet(source, content_dir=FIXTURES / "content")
    assert canonical(html, problems) == expected.rstrip("\n")
