"""The attention course's pages through the engine's checks that tests/engine runs on examples/minimal: every quiz
renders with its correct options marked, and every page's search sections come out of the build's fast path as
html.parser cuts them."""

from __future__ import annotations

import pytest

from tests.conftest import CONTENT
from tests.engine.test_quiz import check_every_quiz_of
from tests.engine.test_search_index import check_search_sections_of


def test_every_quiz_in_the_course_is_valid_and_renders() -> None:
    assert check_every_quiz_of(CONTENT) >= 5


@pytest.mark.slow
def test_search_sections_of_the_real_course_equal_html_parser_s() -> None:
    check_search_sections_of(CONTENT)
