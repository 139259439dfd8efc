"""Code cells: ```{code-cell} python with MyST-style option lines (`:id: name`, `:hide:`, `:expect-error:`,
`:readonly:`, `:browser-only:`) above the code.

At parse time (a core rule) each cell's language and options are checked (every problem as path:line) and the
page's cells are collected in order into `ParseContext.cells`; running them is a stage of its own
(builder/cells/run.py), and the render rule hands each cell, with its output by then, to `render(cell, first)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..errors import Code
from ..model import Cell, parse_context
from .directive import register_directive, report, split_option_lines

FLAG_OPTIONS = {"hide", "expect-error", "readonly", "browser-only"}  # browser-only: the build does not run it
VALUE_OPTIONS = {"id"}


def parse_cell(token: Token, env: dict, index: int, seen_ids: set[str]) -> Cell | None:
    """Check a cell's language and option lines; report every problem as path:line. None if unusable."""
    ok = True
    lang = token.info.strip()
    if lang != "python":
        report(
            env,
            Code.CELL,
            token,
            f"code cell language must be 'python', got '{lang}'"
            if lang
            else "code cell needs a language: write ```{code-cell} python",
        )
        ok = False
    options, code, consumed = split_option_lines(token.content)
    values: dict[str, str] = {}
    for line_index, key, value in options:
        offset = 1 + line_index
        if key in FLAG_OPTIONS:
            if value:
                report(
                    env,
                    Code.CELL,
                    token,
                    f"code cell option ':{key}:' is a flag and takes no value (got '{value}')",
                    offset=offset,
                )
                ok = False
        elif key in VALUE_OPTIONS:
            if not value:
                report(env, Code.CELL, token, f"code cell option ':{key}:' needs a value", offset=offset)
                ok = False
        else:
            known = ", ".join(f":{k}:" for k in sorted(FLAG_OPTIONS | VALUE_OPTIONS))
            report(env, Code.CELL, token, f"unknown code cell option ':{key}:' (known: {known})", offset=offset)
            ok = False
            continue
        if key in values:
            report(env, Code.CELL, token, f"code cell option ':{key}:' given twice", offset=offset)
            ok = False
        values[key] = value
    cell_id = values.get("id") or f"cell-{index}"
    if "id" in values:
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", cell_id):
            line_index = next(i for i, k, _ in options if k == "id")
            report(
                env,
                Code.CELL,
                token,
                f"code cell id '{cell_id}' must be letters, digits, '-' or '_' and start with a letter",
                offset=1 + line_index,
            )
            ok = False
    if cell_id in seen_ids:
        line_index = next((i for i, k, _ in options if k == "id"), -1)
        report(env, Code.CELL, token, f"duplicate code cell id '{cell_id}' on this page", offset=1 + line_index)
        ok = False
    seen_ids.add(cell_id)
    if not code.strip():
        report(env, Code.CELL, token, f"code cell '{cell_id}' is empty")
        ok = False
    if not ok:
        return None
    return Cell(
        token=token,
        id=cell_id,
        code=code.rstrip("\n") + "\n",
        code_offset=1 + consumed,
        hide="hide" in values,
        expect_error="expect-error" in values,
        readonly="readonly" in values,
        browser_only="browser-only" in values,
    )


def code_cell_plugin(
    md: MarkdownIt, *, render: Callable[[Cell, bool], str], cell_widgets: dict[str, str] | None = None
) -> None:
    """Register ```{code-cell}: collect and check the page's cells while parsing, render them afterwards.
    `cell_widgets`: functions a cell may call to show a widget (`show_attention` → `heatmap`): a page whose cells
    call one needs that widget's script."""
    calls = re.compile(r"\b(" + "|".join(map(re.escape, cell_widgets)) + r")\b") if cell_widgets else None

    def collect(state: Any) -> None:
        context = parse_context(state.env)
        seen: set[str] = set()
        for token in state.tokens:
            if token.type != "code-cell":
                continue
            cell = parse_cell(token, state.env, len(context.cells) + 1, seen)
            token.meta = {**(token.meta or {}), "cell": cell, "first_cell": not context.cells}
            context.cells.append(cell)
        if context.cells:
            context.facts.features.add("cells")
            shown = {cell_widgets[m] for c in context.cells if c is not None and calls for m in calls.findall(c.code)}
            for widget in sorted(shown):
                context.facts.features.update(("widgets", f"widget-{widget}"))
            context.facts.extra_ids.update(c.element_id for c in context.cells if c is not None)

    md.core.ruler.push("code_cells", collect)

    def render_token(token: Token, env: dict) -> str:
        cell = (token.meta or {}).get("cell")
        if cell is None:
            return ""
        if cell.element_id in parse_context(env).facts.heading_ids:
            report(env, Code.CELL, token, f"code cell element id '{cell.element_id}' is also a heading id on this page")
        return render(cell, bool(token.meta.get("first_cell")))

    register_directive(md, "code-cell", render_token)
