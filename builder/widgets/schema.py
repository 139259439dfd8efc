"""The shape of a widget: its declared options (each checked against its kind) and the `Widget` record a widget
module exports as `WIDGET` (`Course.add_widgets`, builder/course.py, collects them)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class OptionError(ValueError):
    """A bad option value; `item` is the index of the offending list item, if any."""

    def __init__(self, message: str, item: int | None = None):
        super().__init__(message)
        self.item = item


@dataclass(frozen=True)
class Option:
    """One declared option: its kind decides how a YAML value is checked.

    The engine's kinds: `choice` (one of `choices`), `choices` (a non-empty list of distinct members of
    `choices`), `number` (int or float within [minimum, maximum]), `integer` (int within them), `text` (a string,
    or a number read as its text). A course adds kinds of its own (`Course.add_option_kind`); `rule` is a further
    check such a kind may apply (e.g. which examples a widget accepts).
    """

    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    rule: Callable[[Any], str | None] | None = None

    def check(
        self, name: str, value: Any, kinds: dict[str, Callable[..., Any]] | None = None, widget: Any = None
    ) -> Any:
        """The value to use, or OptionError; `kinds`: the course's option kinds (`Course.option_kinds`), which are
        called as `kind(name, value, option, widget)`."""
        engine_kind = ENGINE_KINDS.get(self.kind)
        if engine_kind is not None:
            return engine_kind(self, name, value)
        course_kind = (kinds or {}).get(self.kind)
        if course_kind is None:
            raise AssertionError(f"unknown option kind {self.kind}")
        return course_kind(name, value, self, widget)


def _choice(opt: Option, name: str, value: Any) -> Any:
    if not isinstance(value, str) or value not in opt.choices:
        raise OptionError(f"option '{name}' must be one of {', '.join(opt.choices)}; got {_show(value)}")
    return value


def _number(opt: Option, name: str, value: Any) -> Any:
    if opt.kind == "number" and isinstance(value, str) and EXPONENT_FLOAT_RE.match(value):
        value = float(value)  # YAML 1.1 reads `1e9` (no dot) as a string; YAML 1.2 and authors mean a number
    ok_type = isinstance(value, int) if opt.kind == "integer" else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok_type or (isinstance(value, float) and not math.isfinite(value)):
        what = "an integer" if opt.kind == "integer" else "a number"
        raise OptionError(f"option '{name}' must be {what}, got {_show(value)}")
    if (opt.minimum is not None and value < opt.minimum) or (opt.maximum is not None and value > opt.maximum):
        raise OptionError(
            f"option '{name}' must be between {num_text(opt.minimum)} and {num_text(opt.maximum)}, "
            f"got {num_text(value)}"
        )
    return value


def _choices(opt: Option, name: str, value: Any) -> Any:
    if not isinstance(value, list) or not value:
        raise OptionError(f"option '{name}' must be a non-empty list of: {', '.join(opt.choices)}")
    for i, item in enumerate(value):
        if not isinstance(item, str) or item not in opt.choices:
            raise OptionError(f"option '{name}': unknown value {_show(item)} (known: {', '.join(opt.choices)})", item=i)
        if item in value[:i]:
            raise OptionError(f"option '{name}' lists {item!r} twice", item=i)
    return list(value)


def _text(opt: Option, name: str, value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise OptionError(f"option '{name}' must be a word or a number, got {_show(value)}")
    return str(value)


ENGINE_KINDS: dict[str, Callable[[Option, str, Any], Any]] = {
    "choice": _choice,
    "choices": _choices,
    "number": _number,
    "integer": _number,
    "text": _text,
}


EXPONENT_FLOAT_RE = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


def _show(value: Any) -> str:
    return (
        repr(value)
        if isinstance(value, str)
        else (json.dumps(value, ensure_ascii=False) if value is not None else "nothing")
    )


def num_text(value: Any) -> str:
    return "∞" if value is None else f"{value:g}"


class WidgetDataError(ValueError):
    """The data of a widget cannot be made (e.g. a sentence the model cannot show, a missing model file): reported
    at the line of `option` (or of the fence)."""

    def __init__(self, message: str, option: str | None = None):
        super().__init__(message)
        self.option = option


BuildData = Callable[[dict, Any], tuple[dict, dict[str, bytes]]]
"""build_data(options, build options) → (the data embedded in the page, extra files for the site)."""


@dataclass(frozen=True)
class Widget:
    """One widget kind, exported as `WIDGET` by the `widget.py` of its folder (builder/course.py): its name (the
    ```{widget} name; its folder's `widget.js` mounts it), the title shown above it, its options, `compute(options)`
    → the data embedded in the page, `fallback(data)` → static HTML of the same numbers, and `check(options)` →
    [(option, message)] for problems across options."""

    name: str
    title: str  # heading shown above the widget
    options: dict[str, Option]
    compute: Callable[[dict], dict]
    fallback: Callable[[dict], str]
    check: Callable[[dict], list[tuple[str, str]]] = field(default=lambda o: [])
    build_data: BuildData | None = None  # instead of `compute`: data that needs the build (a real model, cached)
    lazy: bool = False  # its page script loads when one of its widgets nears the viewport (heavy, far down a page)
    embed: Callable[[dict], dict] | None = None  # the data as embedded, if less is needed than the fallback shows
    # ``{data}`<kind> <selectors…> <target>` ``: quote(data, selectors, target) → the text the widget shows, or
    # ValueError with the reason (builder/widgets/quote.py)
    quote: Callable[[dict, list[str], str], str] | None = None
    # other kinds whose style.css this kind's rules build on (linked before its own; Course.stylesheets)
    styles: tuple[str, ...] = ()

    def defaults(self) -> dict[str, Any]:
        return {k: opt.default for k, opt in self.options.items()}
