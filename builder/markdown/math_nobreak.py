"""Closing punctuation stays with the inline formula before it: `$x$，` renders as
`<span class="math-nobr">…formula…，</span>` (white-space: nowrap), so a full-width comma or full stop never
wraps to the start of the next line on its own (CJK line breaking allows a break after an inline box)."""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

CLOSING = "，。、；：！？）」』”’》〉】"
MATH_TYPES = ("math_inline", "math_inline_double")


def _html(content: str) -> Token:
    token = Token("html_inline", "", 0)
    token.content = content
    return token


def math_nobreak_plugin(md: MarkdownIt) -> None:
    def glue(state: Any) -> None:
        for token in state.tokens:
            if token.type != "inline" or not token.children:
                continue
            children: list[Token] = []
            items = token.children
            i = 0
            while i < len(items):
                child = items[i]
                after = items[i + 1] if i + 1 < len(items) else None
                if (
                    child.type in MATH_TYPES
                    and after is not None
                    and after.type == "text"
                    and after.content[:1] in CLOSING
                ):
                    n = len(after.content) - len(after.content.lstrip(CLOSING))
                    punct = Token("text", "", 0)
                    punct.content = after.content[:n]
                    children += [_html('<span class="math-nobr">'), child, punct, _html("</span>")]
                    after.content = after.content[n:]
                    i += 1
                    if after.content:
                        children.append(after)
                    i += 1
                    continue
                children.append(child)
                i += 1
            token.children = children

    md.core.ruler.push("math_nobreak", glue)
