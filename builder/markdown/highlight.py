"""Build-time syntax highlighting for plain code blocks (Pygments; colours come from theme CSS variables).

Pandoc-style fences (```` ```{.python .input} ````, from Jupyter/d2l-style sources) name the language in their
first class: `pandoc_fences_plugin` turns such an info string into the plain `python`.
"""

from __future__ import annotations

import re
from typing import Any

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


PANDOC_INFO_RE = re.compile(r"^\{\s*\.([A-Za-z0-9_+#-]+)[^}]*\}\s*$")


def pandoc_fences_plugin(md: Any) -> None:
    """```{.python .input} → ```python (before the directives, which use ```{name} without a dot)."""

    def rewrite(state: Any) -> None:
        fences = [t for t in state.tokens if t.type == "fence" and PANDOC_INFO_RE.match(t.info.strip())]
        for token in fences:
            token.info = PANDOC_INFO_RE.sub(r"\1", token.info.strip())

    md.core.ruler.after("block", "pandoc_fences", rewrite)
