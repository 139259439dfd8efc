"""Callout boxes: `::: key 关键观察` … `:::`, and a side-by-side row `:::: compare` … `::::`.

Built on mdit-py-plugins' container plugin; this module only validates kinds and renders accessible HTML.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin

from ..errors import Code
from .directive import parse_inline_at, render_inline_tokens, report


def _icon(body: str) -> str:
    # Inline SVG icons, not emoji: emoji fonts are missing on many Linux desktops (tofu boxes).
    return (
        '<svg class="callout-icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false" '
        'fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">'
        f"{body}</svg>"
    )


# kind -> (default title, icon)
CALLOUT_KINDS: dict[str, tuple[str, str]] = {
    "note": ("说明", _icon('<circle cx="12" cy="12" r="9"/><path d="M12 11v6M12 7.5v.5"/>')),
    "key": ("关键观察", _icon('<circle cx="8" cy="15" r="4"/><path d="M11 12l9-9M17 6l3 3M15 8l2 2"/>')),
    "why": (
        "为什么？",
        _icon('<circle cx="12" cy="12" r="9"/><path d="M9.5 9a2.5 2.5 0 1 1 3.5 2.3c-.7.3-1 .9-1 1.7M12 17v.5"/>'),
    ),
    "warning": ("注意", _icon('<circle cx="12" cy="12" r="9"/><path d="M9 9l6 6M15 9l-6 6"/>')),
    "success": ("要点", _icon('<circle cx="12" cy="12" r="9"/><path d="M8 12.5l2.5 2.5L16 9.5"/>')),
    "summary": ("一句话收尾", _icon('<path d="M5 4h14v16l-7-4-7 4z"/>')),
}


def _kind_and_title(info: str) -> tuple[str, str]:
    """(kind, the title as shown: "" for the kind's default). An author-supplied leading symbol (e.g. "❌ 老办法")
    is dropped: the kind's icon says the same thing and renders everywhere, while emoji fonts are often missing."""
    parts = info.strip().split(None, 1)
    kind = parts[0] if parts else ""
    title = parts[1].strip() if len(parts) > 1 else ""
    if title[:1] and not title[0].isalnum() and ord(title[0]) > 0x2000:
        title = title[1:].lstrip()
    return kind, title


def callout_plugin(md: MarkdownIt) -> None:
    def validate(params: str, *args: Any) -> bool:
        word = params.strip().split(" ", 1)[0]
        return word != "compare" and word != ""

    def render(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
        token = tokens[idx]
        if token.nesting == -1:
            return "</div></aside>\n"
        kind, title = _kind_and_title(token.info)
        if kind not in CALLOUT_KINDS:
            report(env, Code.CALLOUT, token, f"unknown callout kind '{kind}' (known: {', '.join(CALLOUT_KINDS)})")
            kind = "note"
        default_title, icon = CALLOUT_KINDS[kind]
        icon_html = icon
        parsed = token.meta.get("title")
        title_html = render_inline_tokens(md, parsed, env) if parsed is not None else escapeHtml(title or default_title)
        return (
            f'<aside class="callout callout-{kind}" role="note">'
            f'<p class="callout-title">{icon_html}{title_html}</p><div class="callout-body">\n'
        )

    container_plugin(md, "callout", validate=validate, render=render)

    def parse_titles(state: Any) -> None:
        """A title is Markdown: parsed with the page (its formulas typeset, its links checked, problems at its
        line), rendered with the box."""
        for token in state.tokens:
            if token.type == "container_callout_open" and token.map is not None:
                title = _kind_and_title(token.info)[1]
                if title:
                    token.meta["title"] = parse_inline_at(md, title, state.env, token.map[0])

    md.core.ruler.push("callout_titles", parse_titles)

    def render_compare(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
        return '<div class="callout-compare">\n' if tokens[idx].nesting == 1 else "</div>\n"

    container_plugin(md, "compare", render=render_compare)


__all__ = ["callout_plugin", "CALLOUT_KINDS", "escapeHtml"]
