"""TEMPORARY shim: the math stage is now the package builder/katex/ (issue 13). This re-exports, with their old
names and signatures, what the rest of builder/ imports from here; it goes once they import builder.katex."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from . import katex
from .katex import KATEX_VERSION, Formula, MathCache, MathEngine

__all__ = ["KATEX_VERSION", "MathCache", "render_all", "site_katex_assets_cached"]


def _root() -> Path:
    return Path(__file__).resolve().parent.parent  # the repository; callers of builder.katex pass options.root


def render_all(formulas: Iterable[Formula], cache: MathCache, engine: MathEngine | None = None,
               memo: dict[str, str] | None = None) -> tuple[dict[Formula, str], dict[Formula, str], int]:
    return katex.render_all(formulas, cache, _root(), engine, memo)


def site_katex_assets_cached(katex_files: dict[str, bytes], formulas: Iterable[Formula],
                             cache_dir: Path | None) -> dict[str, bytes]:
    return katex.site_katex_assets_cached(katex_files, formulas, cache_dir, _root())
