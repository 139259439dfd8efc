"""The option kinds this course adds to the engine's (builder/widgets/schema.py): an example of the course's bank
(attention_core.EXAMPLES), a list of them, and one character. An example option may carry a `rule` saying which
examples its widget accepts; by default a widget needs one head with embeddings."""

from __future__ import annotations

import json
from typing import Any

from attention_core import EXAMPLES, Example, get_example
from builder.widgets.schema import Option, OptionError, Widget


def needs_single_head(ex: Example) -> str | None:
    """The default rule: why `ex` cannot feed a single-head widget, or None."""
    if ex.X is None:
        return "it has no embeddings (a score-only example)"
    if ex.num_heads != 1:
        return f"it has {ex.num_heads} heads (use the multi-head widget)"
    return None


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _example_id(name: str, value: Any) -> str:
    if not isinstance(value, str) or value not in EXAMPLES:
        raise OptionError(f"option '{name}': unknown example id {_show(value)} (valid ids: {', '.join(EXAMPLES)})")
    return value


def _accepted(ident: str, option: Option, widget: Widget, item: int | None = None) -> None:
    reason = (option.rule or needs_single_head)(get_example(ident))
    if reason:
        raise OptionError(f"example '{ident}' cannot be used by the {widget.name} widget: {reason}", item=item)


def example_kind(name: str, value: Any, option: Option, widget: Widget) -> str:
    ident = _example_id(name, value)
    _accepted(ident, option, widget)
    return ident


def examples_kind(name: str, value: Any, option: Option, widget: Widget) -> list[str]:
    if not isinstance(value, list) or not value:
        raise OptionError(f"option '{name}' must be a non-empty list of example ids, e.g. [cat-fast, animal-tired]")
    seen: set[str] = set()
    for i, item in enumerate(value):
        try:
            ident = _example_id(name, item)
        except OptionError as exc:
            raise OptionError(str(exc), item=i) from None
        if ident in seen:
            raise OptionError(f"option '{name}' lists example '{ident}' twice", item=i)
        seen.add(ident)
    for i, ident in enumerate(value):
        _accepted(ident, option, widget, item=i)
    return list(value)


def character_kind(name: str, value: Any, option: Option, widget: Widget) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise OptionError(f"option '{name}' must be one character, got {value!r}")
    return value


OPTION_KINDS = {"example": example_kind, "examples": examples_kind, "character": character_kind}
