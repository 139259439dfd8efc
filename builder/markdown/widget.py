"""Widgets: ```{widget} name``` with YAML options (`key: value` lines) in the body.

This module only knows the syntax: at parse time (a core rule) each block goes to `prepare(name, body, report,
number)`, which checks its options and computes its data (builder/widgets/) — so every bad option is reported
with its own line and the widget's id is known to the link checker; the render rule hands the prepared block to
`render(block)`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..errors import Code
from ..model import parse_context
from .directive import register_directive, report


class PreparedWidget(Protocol):
    name: str  # the widget kind, e.g. "heatmap"
    ident: str  # its element id
    lazy: bool  # its page script loads only when a widget of the kind nears the viewport


WidgetPrepare = Callable[[str, str, Callable[[str, "int | None"], None], int], "PreparedWidget | None"]


def widget_plugin(md: MarkdownIt, *, prepare: WidgetPrepare, render: Callable[[Any], str]) -> None:
    def prepare_all(state: Any) -> None:
        context = parse_context(state.env)
        for token in state.tokens:
            if token.type != "widget":
                continue

            def problem(message: str, line: int | None = None, token: Token = token) -> None:
                report(state.env, Code.WIDGET, token, message, offset=0 if line is None else 1 + line)

            number = context.scratch.get("widget_count", 0) + 1  # only widgets without problems are counted
            block = prepare(token.info.strip(), token.content, problem, number)
            token.meta["widget"] = block
            if block is not None:
                context.scratch["widget_count"] = number
                kind = f"lazy-widget-{block.name}" if block.lazy else f"widget-{block.name}"
                context.facts.features.update(("widgets", kind))
                context.facts.extra_ids.add(block.ident)
                context.facts.files.update(getattr(block, "files", {}))

    def render_token(token: Token, env: dict) -> str:
        block = token.meta.get("widget")
        return render(block) if block is not None else ""

    register_directive(md, "widget", render_token)  # adds the core rule that makes "widget" tokens
    md.core.ruler.after("directive_widget", "widget_prepare", prepare_all)
