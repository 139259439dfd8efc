"""Build-time syntax highlighting for plain code blocks (Pygments; colours come from theme CSS variables)."""
from __future__ import annotations

from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

_FORMATTER = HtmlFormatter(nowrap=True, classprefix="hl-")


def highlight(code: str, lang: str, attrs: str) -> str:
    """markdown-it `highlight` hook: returns inner HTML for <pre><code>, or '' to let markdown-it escape it."""
    if not lang:
        return ""
    try:
        lexer = get_lexer_by_name(lang, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return ""
    return pygments_highlight(code, lexer, _FORMATTER)
