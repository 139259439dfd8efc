"""Fixtures of the engine tests (the shared ones are in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.output import MARKER, MARKER_TEXT


@pytest.fixture
def previous_site(tmp_path: Path) -> Path:
    """An existing site/ that a failed build must not touch."""
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("previous build", encoding="utf-8")
    (out / MARKER).write_bytes(MARKER_TEXT)  # a folder a build made: the only kind a build replaces
    return out
