"""Numbers the prose quotes about a widget, taken from the widget's data: the inline role
``{data}`<kind> <selector…> <query>→<key>` `` (e.g. ``{data}`multi-head 头1 他→小明` ``) becomes the very
percentage that widget shows for that cell, so prose and demo cannot drift apart.

This module knows the syntax only. After every widget block of the page has been prepared (its data computed,
builder/markdown/widget.py), a core rule hands each role's text and the page's prepared widgets to the injected
`render(widgets, spec)`, which returns the text or raises ValueError with the reason; a reason is a build error
on the role's own line. Roles inside quiz YAML are not resolved (there is no widget in a quiz). On a page with
widgets, a number typed by hand in the widgets' own shape (`他 → 小明 50%`) is an error pointing at the role.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from ..errors import Code
from ..model import parse_context
from .directive import inline_children

ROLE = "{data}`"
# A number typed by hand in the shape the widgets show ("他 → 小明 50%"): it must come from the data instead.
TYPED_QUOTE_RE = re.compile(r"[^\s，。；：、（）()]+\s*→\s*[^\s，。；：、（）()]+\s*[：:]?\s*\d+(?:\.\d+)?\s*%")
WidgetQuote = Callable[[Sequence[Any], str], str]


def widget_quote_plugin(md: MarkdownIt, *, render: WidgetQuote) -> None:
    def role(state: StateInline, silent: bool) -> bool:
        if not state.src.startswith(ROLE, state.pos):
            return False
        start = state.pos + len(ROLE)
        end = state.src.find("`", start)
        if end < 0 or end == start:
            return False
        if not silent:
            token = state.push("widget_quote", "span", 0)
            token.content = state.src[start:end].strip()
        state.pos = end + 1
        return True

    md.inline.ruler.before("backticks", "widget_quote", role)

    def resolve(state: Any) -> None:
        context = parse_context(state.env)
        widgets = [t.meta["widget"] for t in state.tokens if t.type == "widget" and t.meta.get("widget") is not None]
        for child, line in inline_children(state.tokens):
            if child.type == "text" and widgets and TYPED_QUOTE_RE.search(child.content):
                typed = TYPED_QUOTE_RE.search(child.content).group(0)
                context.problems.add(
                    Code.WIDGET,
                    context.rel,
                    context.line_offset + line + 1,
                    f"'{typed}' quotes a widget's number by hand: write it as "
                    "{data}`<kind> <query>→<key>` so it is taken from the widget's data",
                )
            elif child.type == "widget_quote":
                try:
                    child.meta["text"] = render(widgets, child.content)
                except ValueError as exc:
                    context.problems.add(
                        Code.WIDGET, context.rel, context.line_offset + line + 1, f"{{data}}`{child.content}`: {exc}"
                    )

    md.core.ruler.push("widget_quote", resolve)

    def render_quote(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
        token = tokens[idx]
        text = token.meta.get("text", token.content)
        return f'<span class="widget-quote">{escapeHtml(text)}</span>'

    md.add_render_rule("widget_quote", render_quote)
