"""Every widget kind, found rather than listed: each module of this package that defines `WIDGET` is one (one
Python module per widget, beside its theme/js/widgets/<name>.js). The list is made once per process."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from .schema import Widget


@lru_cache(maxsize=1)
def all_widgets() -> dict[str, Widget]:
    """{name: Widget} of every widget module in this package, in module-name order."""
    package = importlib.import_module(__package__)
    found: dict[str, Widget] = {}
    for module_info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        widget = getattr(importlib.import_module(f"{__package__}.{module_info.name}"), "WIDGET", None)
        if isinstance(widget, Widget):
            found[widget.name] = widget
    return found
