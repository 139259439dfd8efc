"""Markdown → tokens → HTML: the parser and one module per syntax extension (callout, figure, headings, links,
math, quiz, widget, code_cell), all sharing the directive mechanism (directive.py)."""

from .links import split_href
from .parser import create_markdown
from .quiz import check_answer_positions

__all__ = ["check_answer_positions", "create_markdown", "split_href"]
