"""Callout boxes: `::: key 关键观察` … `:::`, and a side-by-side row `:::: compare` … `::::`.

Built on mdit-py-plugins' container plugin; this module only validates kinds and renders accessible HTML.
"""
from __future__ import annotations

from typing import Any, Sequence

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin

from ..errors import Code
from .directive import report

# kind -> (default title, icon, ARIA role label)
CALLOUT_KINDS: dict[str, tuple[str, str]] = {
    "note": ("说明", "ℹ️"),
    "key": ("关键观察", "🔑"),
    "why": ("为什么？", "❓"),
    "warning": ("注意", "❌"),
    "success": ("要点", "✅"),
    "summary": ("一句话收尾", "📌"),
}


def callout_plugin(md: MarkdownIt) -> None:
    def validate(params: str, *args: Any) -> bool:
        word = params.strip().split(" ", 1)[0]
        return word != "compare" and word != ""

    def render(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
        token = tokens[idx]
        if token.nesting == -1:
            return "</div></aside>\n"
        parts = token.info.strip().split(None, 1)
        kind = parts[0]
        title = parts[1].strip() if len(parts) > 1 else ""
        if kind not in CALLOUT_KINDS:
            report(env, Code.CALLOUT, token,
                   f"unknown callout kind '{kind}' (known: {', '.join(CALLOUT_KINDS)})")
            kind = "note"
        default_title, icon = CALLOUT_KINDS[kind]
        title = title or default_title
        title_html = md.renderInline(title, env)
        # An author-supplied leading emoji (e.g. "❌ 老办法") replaces the kind's icon.
        icon_html = "" if title[:1] and not title[0].isalnum() and ord(title[0]) > 0x2000 else (
            f'<span class="callout-icon" aria-hidden="true">{icon}</span>')
        return (f'<aside class="callout callout-{kind}" role="note">'
                f'<p class="callout-title">{icon_html}{title_html}</p><div class="callout-body">\n')

    container_plugin(md, "callout", validate=validate, render=render)

    def render_compare(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
        return '<div class="callout-compare">\n' if tokens[idx].nesting == 1 else "</div>\n"

    container_plugin(md, "compare", render=render_compare)


__all__ = ["callout_plugin", "CALLOUT_KINDS", "escapeHtml"]
