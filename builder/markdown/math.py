"""Math syntax: `$…$`, `$$…$$` and bare amsmath environments, typeset at build time.

Parsing is mdit-py-plugins' dollarmath + amsmath. Inline `$` follows Pandoc's rule (dollarmath's
`allow_space=False, allow_digits=False`): an opening `$` has a non-space right after it, a closing one a
non-space right before it and no digit right after it, so `Pay $5 or more, in $USD` and `$HOME and $PATH` stay
text. A `$$` left in the text (an unterminated display formula) is an error. MathJax's `\\(…\\)` (inline) and
`\\[…\\]` (display, on its own lines) are math too (mdit-py-plugins' texmath, brackets); a `\\[…\\]` inside a
paragraph is an error saying how to write it. This plugin records every formula with its source line
in the page facts (`PageFacts.formulas`: the math stage typesets the whole site's at once, de-duplicated and
cached) and renders each from `ParseContext.math_html`, which that stage fills.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.texmath import texmath_plugin

from ..errors import Code
from ..model import Formula, parse_context

UNESCAPED_DOUBLE = re.compile(r"(?<!\\)\$\$")
TABLE_MATH = re.compile(r"(?<!\\)\$(.+?)(?<!\\)\$")
INLINE_BRACKETS = re.compile(r"(?<!\\)\\\[(.+?)\\\]", re.S)
BLOCK_TYPES = {"math_block": True, "math_block_label": True, "math_block_eqno": True, "amsmath": True}
INLINE_TYPES = {"math_inline": False, "math_inline_double": True}


def formula_key(tex: str, display: bool) -> Formula:
    return (tex.strip(), display)


def math_plugin(md: MarkdownIt) -> None:
    dollarmath_plugin(md, allow_labels=False, allow_space=False, allow_digits=False, double_inline=True)
    amsmath_plugin(md)
    texmath_plugin(md, delimiters="brackets")

    def collect(state: Any) -> None:
        context = parse_context(state.env)
        formulas = context.facts.formulas
        source_lines = state.src.split("\n")
        for token in state.tokens:
            if token.type == "tr_open" and token.map and token.map[0] < len(source_lines):
                # a table row is split at `|` before math is parsed: `$a|b$` breaks the cell, `$\|x\|$` loses its `\`
                if any("|" in m.group(1) for m in TABLE_MATH.finditer(source_lines[token.map[0]])):
                    context.problems.warn(
                        Code.MATH,
                        context.rel,
                        context.line_offset + token.map[0] + 1,
                        "`|` inside math in a table row splits the cell: write `\\vert` for | and `\\Vert` for ‖",
                    )
            if token.type in BLOCK_TYPES:
                formulas.append((formula_key(token.content, True), token.map[0] if token.map else 0))
            elif token.type == "inline" and token.children:
                line = token.map[0] if token.map else 0
                inline_display = INLINE_BRACKETS.search(token.content)
                if inline_display:
                    context.problems.add(
                        Code.MATH,
                        context.rel,
                        context.line_offset + line + 1 + token.content.count("\n", 0, inline_display.start()),
                        f"`\\[{inline_display.group(1)}\\]` inside a paragraph: put `\\[` and `\\]` on "
                        "lines of their own for display math, or write `\\(…\\)` for inline math",
                    )
                for child in token.children:
                    if child.type in ("softbreak", "hardbreak"):
                        line += 1
                    elif child.type in INLINE_TYPES:
                        formulas.append((formula_key(child.content, INLINE_TYPES[child.type]), line))
                    elif child.type == "text" and "$$" in child.content and UNESCAPED_DOUBLE.search(token.content):
                        context.problems.add(
                            Code.MATH,
                            context.rel,
                            context.line_offset + line + 1,
                            "unterminated `$$`: a display formula needs a closing `$$` "
                            "(write `\\$` for a literal dollar sign)",
                        )
                    line += child.content.count("\n") if child.type in INLINE_TYPES else 0

    md.core.ruler.push("collect_math", collect)

    def render(display: bool):
        def rule(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
            tex = tokens[idx].content
            html = parse_context(env).math_html.get(formula_key(tex, display))
            if html is None:  # the formula failed; the error is already reported
                html = f'<code class="math-error">{escapeHtml(tex)}</code>'
            if display and tokens[idx].type in BLOCK_TYPES:
                return f'<div class="math-display">{html}</div>\n'
            return html

        return rule

    for name, display in {**BLOCK_TYPES, **INLINE_TYPES}.items():
        md.add_render_rule(name, render(display))
