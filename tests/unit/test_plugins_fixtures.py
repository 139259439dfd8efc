"""Fixture-file tests for our markdown plugins (mdit-py-plugins style).

Each case is: title / `.` / Markdown / `.` / expected / `.`. The expected block is either the exact HTML,
lines starting with `CONTAINS ` (each must appear in the HTML), or lines starting with `ERROR ` (each must
match one reported problem; a trailing `*` matches any rest of the message).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it.utils import read_fixture_file

from tests.plugin_harness import render_snippet

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FILES = ["callout.md", "headings.md", "links.md", "math.md", "figure.md"]


def matches(problem: str, pattern: str) -> bool:
    """Exact match, or a prefix match when the pattern ends with '*' (brackets are literal)."""
    if pattern.endswith("*"):
        return problem.startswith(pattern[:-1])
    return problem == pattern


def cases():
    for name in FILES:
        path = FIXTURES / name
        if not path.exists():
            continue
        for line, title, source, expected in read_fixture_file(path):
            yield pytest.param(source, expected, id=f"{name}:{line + 1}:{title}")


@pytest.mark.parametrize("source,expected", list(cases()))
def test_fixture(source: str, expected: str, tmp_path: Path) -> None:
    content_dir = FIXTURES / "content"
    html, problems = render_snippet(source, content_dir=content_dir)
    lines = [ln for ln in expected.splitlines() if ln.strip()]
    if lines and lines[0].startswith("ERROR "):
        for want in lines:
            pattern = want[len("ERROR "):]
            assert any(matches(p, pattern) for p in problems), f"{pattern!r} not in {problems}"
        return
    assert problems == []
    if lines and lines[0].startswith("CONTAINS "):
        for want in lines:
            assert want[len("CONTAINS "):] in html
        return
    assert html == expected
