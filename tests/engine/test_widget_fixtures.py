"""examples/minimal's widget folders, each through its fixture.md (tests/widget_fixtures.py): found as the build
finds them, rendered as a page of that course without a problem. (The browser half:
tests/e2e/test_widget_fixtures.py.)"""

from __future__ import annotations

import pytest

from tests.conftest import MINIMAL
from tests.widget_fixtures import check_fixture_renders, fixture_params


@pytest.mark.parametrize("kind,folder", fixture_params(MINIMAL))
def test_the_fixture_renders(kind, folder):
    check_fixture_renders(MINIMAL, kind, folder)
