"""Blocks left open: a `:::` callout (or `::::` row) or a ``` / ~~~ fence (code, a directive) with no closing line.

CommonMark and the container plugin close such a block at the end of the document (or of the list item or quote
holding it) without a word: the rest of the page silently disappears into the callout box or the code block. Here
that is an error at the opening line, saying how many lines it swallowed.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt

from ..errors import Code
from ..model import parse_context

KINDS = {"callout": "callout", "compare": "side-by-side row"}
QUOTE_PREFIX = re.compile(r"^(?:[ \t]*>)*[ \t]*")


def _closes(line: str, char: str, length: int) -> bool:
    """Is `line` (without its quote markers and indent) a closing line of `length` or more `char`s?"""
    text = QUOTE_PREFIX.sub("", line).rstrip()
    return len(text) >= length and text == char * len(text)


def unclosed_blocks_plugin(md: MarkdownIt) -> None:
    def check(state: Any) -> None:
        context = parse_context(state.env)
        lines = state.src.split("\n")
        for token in state.tokens:
            if token.map is None or token.nesting == -1 or not token.markup:
                continue
            char = token.markup[0]
            if token.type.startswith("container_") and token.nesting == 1:
                end = token.map[1]  # the closing line's index when there is one
                kind = token.type.removeprefix("container_").removesuffix("_open")
                what = f'the {KINDS.get(kind, kind + " block")} "{token.markup}" opened here'
            elif token.nesting == 0 and char in "`~" and token.markup == char * len(token.markup):
                end = token.map[1] - 1  # a fence's map ends after its closing line
                what = f'the fence "{token.markup}{token.info.split()[0] if token.info.split() else ""}" opened here'
            else:
                continue
            if end > token.map[0] and end < len(lines) and _closes(lines[end], char, len(token.markup)):
                continue
            swallowed = max(0, min(token.map[1], len(lines)) - token.map[0] - 1)
            context.problems.add(
                Code.DIRECTIVE,
                context.rel,
                context.line_offset + token.map[0] + 1,
                f"{what} is never closed: the {swallowed} line{'s' if swallowed != 1 else ''} after it, to the end "
                f"of the {'page' if token.map[1] >= len(lines) - 1 else 'enclosing list or quote'}, would disappear "
                f'into it; close it with a line "{token.markup}"',
            )

    md.core.ruler.after("block", "unclosed_blocks", check)


__all__ = ["unclosed_blocks_plugin"]
