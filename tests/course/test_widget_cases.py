"""The attention course's widget kinds in the widget directives' fixture format (tests/plugin_harness.py): exact
HTML and every bad-option message with its line, rendered against tests/course/fixtures/content (a site.yml that
names the course, and the engine fixtures' small glossary)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plugin_harness import check_fixture_case, fixture_params

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CASES = [
    case
    for name in ("widget", "widget_quote")
    for case in fixture_params(FIXTURES / f"{name}.md", FIXTURES / "content")
]


def test_there_are_cases() -> None:
    assert len(CASES) > 20


@pytest.mark.parametrize("source,expected,content_dir", CASES)
def test_fixture(source: str, expected: str, content_dir: Path) -> None:
    check_fixture_case(source, expected, content_dir)
