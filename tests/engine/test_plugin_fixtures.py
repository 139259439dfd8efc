"""Every syntax extension's fixture file, through one runner (tests/plugin_harness.py: mdit-py-plugins'
`read_fixture_file` style, exact HTML and exact problem lines). Every extension must have its fixture file here: a
missing one fails. The widget directives are run against examples/minimal's course (its `softmax3`); the attention
course's own widget cases are tests/course/fixtures/, run by tests/course/test_widget_cases.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it.utils import read_fixture_file

from tests.conftest import MINIMAL, ROOT
from tests.plugin_harness import check_fixture_case, fixture_params

FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXTENSIONS = [
    "callout",
    "code_cell",
    "exercise",
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
WITH_A_COURSE = {"widget", "widget_quote"}  # the engine knows no widget kind: these need a course's (MINIMAL's)


def test_every_extension_has_its_fixture_file() -> None:
    modules = sorted(
        p.stem
        for p in (ROOT / "builder" / "markdown").glob("*.py")
        if p.stem not in ("__init__", "parser", "directive", "highlight")
    )
    assert modules == sorted(EXTENSIONS)  # a new extension gets a fixture file and a place in this list
    for name in EXTENSIONS:
        assert (FIXTURES / f"{name}.md").is_file(), f"tests/engine/fixtures/{name}.md is missing"
        assert read_fixture_file(FIXTURES / f"{name}.md"), f"tests/engine/fixtures/{name}.md has no case"


CASES = [
    case
    for name in EXTENSIONS
    for case in fixture_params(FIXTURES / f"{name}.md", MINIMAL if name in WITH_A_COURSE else FIXTURES / "content")
]


@pytest.mark.parametrize("source,expected,content_dir", CASES)
def test_fixture(source: str, expected: str, content_dir: Path) -> None:
    check_fixture_case(source, expected, content_dir)
