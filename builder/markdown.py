"""Stage 2 — Markdown: one configured markdown-it parser; parse every page, later render it.

Parsing and rendering are separate so the build can gather facts from all pages (headings for the
link checker, formulas for the math stage) before any HTML is produced.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from .highlight import highlight
from .plugins.callout import callout_plugin
from .plugins.directive import unknown_directive_plugin
from .plugins.figure import figure_plugin
from .plugins.headings import headings_plugin
from .plugins.links import links_plugin
from .plugins.math import math_plugin


def create_markdown(*, content_dir: Path, extra_plugins: list[Any] | None = None) -> MarkdownIt:
    """The site's parser: CommonMark + tables + math + our directives.

    `extra_plugins` are callables `plugin(md)` for directives registered by other stages
    (widgets, code cells, quizzes); they must be added before the unknown-directive check.
    """
    md = MarkdownIt("commonmark", {"html": True, "typographer": False, "highlight": highlight}).enable("table").enable("strikethrough")
    math_plugin(md)
    callout_plugin(md)
    headings_plugin(md)
    links_plugin(md)
    figure_plugin(md, content_dir=content_dir)
    for plugin in extra_plugins or []:
        plugin(md)
    unknown_directive_plugin(md)
    return md
