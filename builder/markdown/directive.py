"""Shared mechanics for fenced directives: ```{name} argument … ```.

A core rule turns a `fence` token whose info string starts with `{name}` into a token of type `name`
(keeping `map`, `content`, and the argument in `token.info`), so each plugin only registers a render rule.
Unknown `{…}` fences are reported by `unknown_directive_plugin`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..errors import Code
from ..model import Link, ParseContext, parse_context

DIRECTIVE_RE = re.compile(r"^\{([a-z][a-z0-9-]*)\}\s*(.*)$")

# (token, env) -> HTML
DirectiveRender = Callable[[Token, dict], str]


def source_line(env: dict, token: Token, offset: int = 0) -> int:
    """1-based line in the source file of `token` (plus `offset` lines into its block)."""
    start = token.map[0] if token.map else 0
    return parse_context(env).line_offset + start + 1 + offset


def inline_children(tokens: Sequence[Token]) -> Iterator[tuple[Token, int]]:
    """Every child of every inline token with its 0-based line in the page body (soft/hard breaks count)."""
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        line = token.map[0] if token.map else 0
        for child in token.children:
            if child.type in ("softbreak", "hardbreak"):
                line += 1
            yield child, line


def report(env: dict, code: Code, token: Token, message: str, offset: int = 0) -> None:
    context = parse_context(env)
    context.problems.add(code, context.rel, source_line(env, token, offset), message)


def parse_inline_at(md: MarkdownIt, text: str, env: dict, line: int) -> list[Token]:
    """Inline Markdown that belongs to a block (a callout's title, a figure's caption), parsed with the page, not
    when the block is rendered: its formulas reach the math stage and its links the link checker, and whatever its
    plugins report (raw HTML, a `javascript:` link, a synonym) names `line`, its own 0-based body line. Render the
    tokens with `render_inline_tokens`."""
    context = parse_context(env)
    scratch = ParseContext(context.rel, context.line_offset + line, context.problems, context.planned_slugs)
    scratch.scratch["inline_line"] = 0  # the glossary's synonym warnings (glossary.py)
    tokens = md.parseInline(text, scratch.env())
    context.facts.formulas.extend((f, line + at) for f, at in scratch.facts.formulas)
    context.facts.links.extend(Link(link.href, line + link.line) for link in scratch.facts.links)
    context.facts.images.update(scratch.facts.images)
    return tokens


def render_inline_tokens(md: MarkdownIt, tokens: list[Token], env: dict) -> str:
    """HTML of tokens from `parse_inline_at`, rendered with the page's env (its typeset math)."""
    return md.renderer.render(tokens, md.options, env)


def register_directive(md: MarkdownIt, name: str, render: DirectiveRender) -> None:
    """Route ```{name} fences to `render(token, env)`."""
    known: set[str] = md.options.setdefault("directives", set())  # type: ignore[assignment]
    known.add(name)

    def to_directive(state: Any) -> None:
        for token in state.tokens:
            if token.type != "fence":
                continue
            m = DIRECTIVE_RE.match(token.info.strip())
            if m and m.group(1) == name:
                token.type = name
                token.info = m.group(2).strip()

    md.core.ruler.after("block", f"directive_{name}", to_directive)

    def render_rule(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
        return render(tokens[idx], env)

    md.add_render_rule(name, render_rule)


def unknown_directive_plugin(md: MarkdownIt) -> None:
    """Report fences like ```{widgte} that no plugin claimed (register this plugin last)."""

    def check(state: Any) -> None:
        for token in state.tokens:
            if token.type == "fence":
                m = DIRECTIVE_RE.match(token.info.strip())
                if m:
                    known = sorted(md.options.get("directives", ()))
                    report(
                        state.env,
                        Code.DIRECTIVE,
                        token,
                        f"unknown directive '{{{m.group(1)}}}' (known: {', '.join('{' + k + '}' for k in known)})",
                    )

    md.core.ruler.push("unknown_directive", check)


# Blocks left open: a `:::` callout (or `::::` row) or a ``` / ~~~ fence (code, a directive) with no closing line.
# CommonMark and the container plugin close such a block at the end of the document (or of the list item or quote
# holding it) without a word: the rest of the page silently disappears into the callout box or the code block. Here
# that is an error at the opening line, saying how many lines it swallowed.

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
                what = KINDS.get(kind, kind + " block")
            elif token.nesting == 0 and char in "`~" and token.markup == char * len(token.markup):
                end = token.map[1] - 1  # a fence's map ends after its closing line
                what = "fence"
            else:
                continue
            if end > token.map[0] and end < len(lines) and _closes(lines[end], char, len(token.markup)):
                continue
            swallowed = max(0, min(token.map[1], len(lines)) - token.map[0] - 1)
            opening = QUOTE_PREFIX.sub("", lines[token.map[0]]).strip() if token.map[0] < len(lines) else token.markup
            what = f'the {what} "{opening if len(opening) <= 40 else opening[:39] + "…"}" opened here'
            context.problems.add(
                Code.DIRECTIVE,
                context.rel,
                context.line_offset + token.map[0] + 1,
                f"{what} is never closed: the {swallowed} line{'s' if swallowed != 1 else ''} after it, to the end "
                f"of the {'page' if token.map[1] >= len(lines) - 1 else 'enclosing list or quote'}, would disappear "
                f'into it; close it with a line "{token.markup}"',
            )

    md.core.ruler.after("block", "unclosed_blocks", check)


def split_option_lines(content: str) -> tuple[list[tuple[int, str, str]], str, int]:
    """Split MyST-style `:key: value` lines from the top of a block.

    Returns ([(line_index, key, value)], rest, number of lines consumed).
    """
    options: list[tuple[int, str, str]] = []
    lines = content.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^:([A-Za-z][\w-]*):\s*(.*)$", lines[i])
        if not m:
            break
        options.append((i, m.group(1), m.group(2).strip()))
        i += 1
    return options, "\n".join(lines[i:]), i
