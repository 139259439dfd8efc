"""Heading ids, permalinks and the table of contents.

`## 标题 {#my-id}` sets an explicit id; otherwise the id is the heading text with spaces turned into '-'
(Chinese is kept as is: browsers handle percent-encoded fragments, and readable ids make good links).
Collected headings go to the page facts (`PageFacts.headings`) for the TOC and for the link checker.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

from ..errors import Code
from ..model import Heading, parse_context
from ..reserved_ids import reserved_id, reserved_message

EXPLICIT_ID_RE = re.compile(r"\s*\{#([A-Za-z][\w-]*)\}\s*$")


def slugify(text: str) -> str:
    text = re.sub(r"[\s\u3000]+", "-", text.strip().lower())
    # Drop punctuation (ASCII and CJK full-width), keep letters/digits of any script, '-' and '_'.
    text = "".join(ch for ch in text if ch.isalnum() or ch in "-_")
    return re.sub(r"-{2,}", "-", text).strip("-") or "section"


def headings_plugin(md: MarkdownIt, *, min_level: int = 2, max_level: int = 3, permalink: bool = True) -> None:
    def assign_ids(state: Any) -> None:
        context = parse_context(state.env)
        facts = context.facts
        used = facts.heading_ids
        tokens = state.tokens
        for i, token in enumerate(tokens):
            if token.type != "heading_open":
                continue
            inline = tokens[i + 1]
            explicit = None
            if inline.children:
                last = inline.children[-1]
                if last.type == "text":
                    m = EXPLICIT_ID_RE.search(last.content)
                    if m:
                        explicit = m.group(1)
                        last.content = last.content[: m.start()]
                        inline.content = EXPLICIT_ID_RE.sub("", inline.content)
            text = "".join(
                c.content for c in (inline.children or []) if c.type in ("text", "code_inline", "math_inline")
            )
            base = explicit or slugify(text)
            line = context.line_offset + (token.map[0] if token.map else 0) + 1
            taken = reserved_message(base, "heading")
            if taken and explicit:
                context.problems.add(Code.HEADING, context.rel, line, f"heading {taken}")
            elif taken:  # an automatic id the theme uses: this heading gets another (a link to it is checked)
                context.problems.warn(
                    Code.HEADING,
                    context.rel,
                    line,
                    f"heading id '{base}' would be one the theme uses ({reserved_id(base)}); this heading gets "
                    f"'s-{base}' (give it an explicit id: `## 标题 {{#my-id}}`)",
                )
                base = f"s-{base}"
            ident, n = base, 1
            while ident in used:
                ident, n = f"{base}-{n}", n + 1
            if ident != base:
                context.problems.warn(
                    Code.HEADING,
                    context.rel,
                    line,
                    f"heading id '{base}' is already used on this page; this heading gets '{ident}' "
                    f"(give it an explicit id: `## 标题 {{#my-id}}`)",
                )
            used.add(ident)
            token.attrSet("id", ident)
            level = int(token.tag[1])
            facts.headings.append(Heading(level, ident, text.strip(), token.map[0] if token.map else 0))

    md.core.ruler.push("heading_ids", assign_ids)

    if permalink:
        default_close = md.renderer.rules.get("heading_close")

        def heading_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
            open_token = tokens[idx - 2]
            ident = open_token.attrGet("id")
            level = int(open_token.tag[1])
            anchor = ""
            if ident and min_level <= level <= max_level:
                anchor = f'<a class="heading-anchor" href="#{escapeHtml(str(ident))}" aria-label="本节链接">#</a>'
            close = (
                default_close(tokens, idx, options, env)
                if default_close
                else self.renderToken(tokens, idx, options, env)
            )
            return anchor + close

        md.add_render_rule("heading_close", heading_close)
