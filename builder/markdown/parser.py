"""The site's markdown-it parser: CommonMark + tables + strikethrough + our syntax extensions, one module each
(every one a `*_plugin(md, …)` in the mdit-py-plugins shape). What a directive turns into is injected: the
widget (builder/widgets/), code-cell (builder/cells/), exercise (builder/exercises/) and quiz renderers come in as
callables, so this package knows syntax only.

Parsing and rendering are separate so the build can gather facts from all pages (headings for the link
checker, formulas for the math stage, cells for the cells stage) before any HTML is produced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from ..model import GlossaryTerm
from .callout import callout_plugin
from .code_cell import code_cell_plugin
from .directive import unclosed_blocks_plugin, unknown_directive_plugin
from .exercise import ExerciseRender, exercise_plugin
from .figure import figure_plugin
from .glossary import glossary_plugin
from .headings import headings_plugin
from .highlight import highlight, pandoc_fences_plugin
from .images import images_plugin
from .links import links_plugin
from .math import math_plugin
from .math_nobreak import math_nobreak_plugin
from .quiz import quiz_plugin
from .raw_html import raw_html_plugin
from .sections import sections_plugin
from .widget import WidgetPrepare, widget_plugin
from .widget_quote import WidgetQuote, widget_quote_plugin


def create_markdown(
    *,
    content_dir: Path,
    prepare_widget: WidgetPrepare,
    render_widget: Callable[[Any], str],
    render_cell: Callable[[Any, bool], str],
    render_exercise: ExerciseRender,
    quote_widget: WidgetQuote,
    glossary: Sequence[GlossaryTerm] = (),
    cell_widgets: dict[str, str] | None = None,
    plugins: Sequence[Callable[[MarkdownIt], None]] = (),
) -> MarkdownIt:
    """The site's parser. Every directive plugin, the course's `plugins` included, is added before the
    unknown-directive check, which must come last: it reports the ```{…} fences no plugin claimed."""
    md = (
        MarkdownIt("commonmark", {"html": True, "typographer": False, "highlight": highlight})
        .enable("table")
        .enable("strikethrough")
    )
    pandoc_fences_plugin(md)
    math_plugin(md)
    math_nobreak_plugin(md)
    callout_plugin(md)
    unclosed_blocks_plugin(md)
    headings_plugin(md)
    links_plugin(md)
    raw_html_plugin(md)
    images_plugin(md, content_dir=content_dir)
    figure_plugin(md, content_dir=content_dir)
    widget_plugin(md, prepare=prepare_widget, render=render_widget)
    widget_quote_plugin(md, render=quote_widget)
    code_cell_plugin(md, render=render_cell, cell_widgets=cell_widgets)
    quiz_plugin(md)
    exercise_plugin(md, render=render_exercise)
    glossary_plugin(md, terms=glossary)
    for plugin in plugins:
        plugin(md)
    unknown_directive_plugin(md)
    sections_plugin(md)  # last: wraps the finished top-level token stream
    return md
