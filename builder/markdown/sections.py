"""Each `##` section of a page's body in its own `<section class="page-section">` (from its heading to the next
`##`), so the theme can leave the sections off-screen unrendered until the reader gets near them
(`content-visibility: auto` in theme/css/base.css; issue 19: style and layout of a long page's whole DOM at
once were most of the main thread's work on a slow phone). What comes before the first `##` (the page's first
screen) stays as it is. Only top-level headings start a section: a `##` inside a callout or quiz does not."""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

OPEN = '<section class="page-section">\n'
CLOSE = "</section>\n"


def sections_plugin(md: MarkdownIt) -> None:
    def wrap_sections(state: Any) -> None:
        out: list[Token] = []
        inside = False
        for token in state.tokens:
            if token.type == "heading_open" and token.tag == "h2" and token.level == 0:
                if inside:
                    out.append(_html(CLOSE))
                out.append(_html(OPEN))
                inside = True
            out.append(token)
        if inside:
            out.append(_html(CLOSE))
        state.tokens = out

    md.core.ruler.push("page_sections", wrap_sections)


def _html(content: str) -> Token:
    token = Token("html_block", "", 0)
    token.content = content
    token.block = True
    return token
