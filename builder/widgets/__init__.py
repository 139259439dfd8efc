"""Widgets: ```{widget} name``` blocks whose numbers are computed at build time by the widget kinds a course
registers (builder/course.py: one folder per kind). What a widget kind's `widget.py` uses: `Widget`, `Option`,
`OptionError`, `WidgetDataError` (schema.py), the fallback helpers (fallback.py) and `quote_named`/`cell_percent`
(quote.py)."""

from .block import WidgetBlock, prepare_widget, render_widget
from .quote import quote_widget
from .schema import Option, OptionError, Widget, WidgetDataError

__all__ = [
    "Option",
    "OptionError",
    "Widget",
    "WidgetBlock",
    "WidgetDataError",
    "prepare_widget",
    "quote_widget",
    "render_widget",
]
