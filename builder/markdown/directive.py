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
from ..model import parse_context

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
