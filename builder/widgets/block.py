"""A ```{widget} block, from its YAML options to its HTML: options checked against the widget's schema (every
problem with the line of the offending option), data computed, then rendered as the fallback HTML plus the data
as `<script type="application/json">` (the kind's widget.js mounts on it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml
from markdown_it.common.utils import escapeHtml

from .. import strict_yaml
from .fallback import embed_json
from .schema import OptionError, Widget, WidgetDataError

Report = Callable[[str, "int | None"], None]
"""report(message, 0-based line in the block's body or None for the fence line)."""


@dataclass
class WidgetBlock:
    widget: Widget
    options: dict[str, Any]
    data: dict[str, Any]
    ident: str  # the element id, "widget-<n>" (n counts the page's widgets)
    files: dict[str, bytes] = field(default_factory=dict)  # extra site files (data loaded on first interaction)

    @property
    def name(self) -> str:
        return self.widget.name

    @property
    def lazy(self) -> bool:
        return self.widget.lazy


def _option_lines(content: str) -> dict[str, tuple[int, int, list[int]]]:
    """key -> (0-based line of the key, line of the value, lines of list items) from the YAML body."""
    lines: dict[str, tuple[int, int, list[int]]] = {}
    root = yaml.compose(content, Loader=yaml.SafeLoader)
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            items = [n.start_mark.line for n in value.value] if isinstance(value, yaml.SequenceNode) else []
            lines[str(key.value)] = (key.start_mark.line, value.start_mark.line, items)
    return lines


def prepare_widget(
    name: str, body: str, report: Report, number: int, *, build: Any = None, course: Any = None
) -> WidgetBlock | None:
    """Validate one ```{widget} block and compute its data; report every problem (with its 0-based line in the
    block's body, None for the fence line) and return None if there was any. `number` makes the element id."""
    failed = False

    def error(message: str, line: int | None = None) -> None:
        nonlocal failed
        failed = True
        report(message, line)

    widgets = course.widgets if course is not None else {}
    widget = widgets.get(name)
    if widget is None:
        known = ", ".join(sorted(widgets))
        error(
            f"unknown widget '{name}' (known: {known})"
            if name
            else f"missing widget name after {{widget}} (known: {known})"
        )
        return None
    try:
        raw = strict_yaml.load(body) if body.strip() else {}
        lines = _option_lines(body) if body.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        last_line = max(0, len(body.rstrip("\n").split("\n")) - 1)  # EOF errors point at the last option line
        error(
            f"widget options are not valid YAML: {getattr(exc, 'problem', None) or exc}",
            min(mark.line, last_line) if mark is not None else 0,
        )
        return None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        error("widget options must be `key: value` lines", 0)
        return None

    options = widget.defaults()
    for key, value in raw.items():
        key_line, value_line, item_lines = lines.get(str(key), (0, 0, []))
        spec = widget.options.get(str(key))
        if spec is None:
            error(f"unknown option '{key}' for widget '{name}' (allowed: {', '.join(widget.options)})", key_line)
            continue
        try:
            options[str(key)] = spec.check(str(key), value, course.option_kinds, widget)
        except OptionError as exc:
            line = item_lines[exc.item] if exc.item is not None and exc.item < len(item_lines) else value_line
            error(str(exc), line)
    if failed:
        return None
    for key, message in widget.check(options):
        error(message, lines[key][1] if key in lines else None)
    if failed:
        return None
    if widget.build_data is None:
        return WidgetBlock(widget, options, widget.compute(options), f"widget-{number}")
    try:
        data, files = widget.build_data(options, build)
    except WidgetDataError as exc:
        error(str(exc), lines[exc.option][1] if exc.option in lines else None)
        return None
    return WidgetBlock(widget, options, data, f"widget-{number}", files)


def render_widget(block: WidgetBlock) -> str:
    w, ident = block.widget, block.ident
    return (
        f'<div class="widget widget-{w.name}" data-widget="{w.name}" id="{ident}" role="group" '
        f'aria-labelledby="{ident}-title">'
        f'<p class="widget-title" id="{ident}-title"><span class="widget-kicker">交互演示</span>'
        f"{escapeHtml(w.title)}</p>"
        f'<div class="widget-body">{w.fallback(block.data)}</div>'
        '<script type="application/json" class="widget-data">'
        f"{embed_json(w.embed(block.data) if w.embed else block.data)}</script>"
        "</div>\n"
    )
