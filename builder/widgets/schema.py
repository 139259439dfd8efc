"""The shape of a widget: its declared options (each checked against its kind) and the `Widget` record a widget
module exports as `WIDGET` (builder/widgets/registry.py collects them)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attention_core import EXAMPLES, Example


class OptionError(ValueError):
    """A bad option value; `item` is the index of the offending list item, if any."""

    def __init__(self, message: str, item: int | None = None):
        super().__init__(message)
        self.item = item


@dataclass(frozen=True)
class Option:
    """One declared option: its kind decides how a YAML value is checked.

    kinds: `example` (an example id), `examples` (a non-empty list of example ids), `choice` (one of
    `choices`), `number` (int or float within [minimum, maximum]), `integer` (int ≥ minimum),
    `token` (a string; cross-checked against the example's tokens by the widget), `choices` (a non-empty list of
    distinct members of `choices`).
    """

    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None

    def check(self, name: str, value: Any) -> Any:
        if self.kind == "example":
            return _example_id(name, value)
        if self.kind == "examples":
            if not isinstance(value, list) or not value:
                raise OptionError(
                    f"option '{name}' must be a non-empty list of example ids, e.g. [cat-fast, animal-tired]"
                )
            seen: set[str] = set()
            for i, item in enumerate(value):
                try:
                    ident = _example_id(name, item)
                except OptionError as exc:
                    raise OptionError(str(exc), item=i) from None
                if ident in seen:
                    raise OptionError(f"option '{name}' lists example '{ident}' twice", item=i)
                seen.add(ident)
            return list(value)
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise OptionError(f"option '{name}' must be one of {', '.join(self.choices)}; got {_show(value)}")
            return value
        if self.kind == "number" and isinstance(value, str) and EXPONENT_FLOAT_RE.match(value):
            value = float(value)  # YAML 1.1 reads `1e9` (no dot) as a string; YAML 1.2 and authors mean a number
        if self.kind in ("number", "integer"):
            ok_type = isinstance(value, int) if self.kind == "integer" else isinstance(value, (int, float))
            if isinstance(value, bool) or not ok_type or (isinstance(value, float) and not math.isfinite(value)):
                what = "an integer" if self.kind == "integer" else "a number"
                raise OptionError(f"option '{name}' must be {what}, got {_show(value)}")
            if (self.minimum is not None and value < self.minimum) or (
                self.maximum is not None and value > self.maximum
            ):
                raise OptionError(
                    f"option '{name}' must be between {_num(self.minimum)} and {_num(self.maximum)}, got {_num(value)}"
                )
            return value
        if self.kind == "choices":
            if not isinstance(value, list) or not value:
                raise OptionError(f"option '{name}' must be a non-empty list of: {', '.join(self.choices)}")
            for i, item in enumerate(value):
                if not isinstance(item, str) or item not in self.choices:
                    raise OptionError(
                        f"option '{name}': unknown value {_show(item)} (known: {', '.join(self.choices)})", item=i
                    )
                if item in value[:i]:
                    raise OptionError(f"option '{name}' lists {item!r} twice", item=i)
            return list(value)
        if self.kind == "token":
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise OptionError(f"option '{name}' must be a token (a word of the example), got {_show(value)}")
            return str(value)
        raise AssertionError(f"unknown option kind {self.kind}")


EXPONENT_FLOAT_RE = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


def _show(value: Any) -> str:
    return (
        repr(value)
        if isinstance(value, str)
        else (json.dumps(value, ensure_ascii=False) if value is not None else "nothing")
    )


def _num(value: Any) -> str:
    return "∞" if value is None else f"{value:g}"


def _example_id(name: str, value: Any) -> str:
    if not isinstance(value, str) or value not in EXAMPLES:
        raise OptionError(f"option '{name}': unknown example id {_show(value)} (valid ids: {', '.join(EXAMPLES)})")
    return value


def needs_single_head(ex: Example) -> str | None:
    """The default `accepts` rule: why `ex` cannot feed a single-head widget, or None."""
    if ex.X is None:
        return "it has no embeddings (a score-only example)"
    if ex.num_heads != 1:
        return f"it has {ex.num_heads} heads (use the multi-head widget)"
    return None


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
    """One widget kind: its name (the ```{widget} name and theme/js/widgets/<name>.js), the title shown above it,
    its options, `compute(options)` → the data embedded in the page (NumPy via attention_core), `fallback(data)`
    → static HTML of the same numbers, `check(options)` → [(option, message)] for cross-option problems, and
    `accepts(example)` → why an example cannot be used, or None."""

    name: str
    title: str  # Chinese heading shown above the widget
    options: dict[str, Option]
    compute: Callable[[dict], dict]
    fallback: Callable[[dict], str]
    check: Callable[[dict], list[tuple[str, str]]] = field(default=lambda o: [])
    accepts: Callable[[Example], str | None] = field(default=needs_single_head)
    build_data: BuildData | None = None  # instead of `compute`: data that needs the build (a real model, cached)
    lazy: bool = False  # its page script loads when one of its widgets nears the viewport (heavy, far down a page)
    embed: Callable[[dict], dict] | None = None  # the data as embedded, if less is needed than the fallback shows
    # ``{data}`<kind> <selectors…> <target>` `` for a kind quote.py does not know: quote(data, selectors, target)
    # → the text the widget shows, or ValueError with the reason
    quote: Callable[[dict, list[str], str], str] | None = None
    # theme/css/widgets/<stylesheet>.css: this kind's own rules, linked only by pages that have such a widget
    # (None: its rules are in theme/css/widgets.css, which every page with widgets links)
    stylesheet: str | None = None

    def defaults(self) -> dict[str, Any]:
        return {k: opt.default for k, opt in self.options.items()}
