"""Interactive widgets: ```{widget} name``` blocks whose numbers are all computed at build time (attention_core),
one module per widget (its options, its computation, its fallback HTML) beside theme/js/widgets/<name>.js."""

from .block import WidgetBlock, prepare_widget, render_widget
from .quote import quote_widget
from .registry import all_widgets

__all__ = ["WidgetBlock", "all_widgets", "prepare_widget", "quote_widget", "render_widget"]
