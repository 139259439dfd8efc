"""Internal links: collected for the link checker, and links to planned pages rendered as 即将推出.

An internal link is one without a scheme: `page.html`, `page.html#anchor` or `#anchor`.
The checker (builder/checks.py) validates them once every page's headings are known.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..errors import Code
from ..markup_policy import LINK_SCHEMES, url_scheme
from ..model import Link, parse_context
from .directive import inline_children

SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
# A link goes to a page of the site, or out by http(s) or mailto: any other scheme (javascript:, data:, file:, …)
# is an error.


def is_internal(href: str) -> bool:
    return not SCHEME_RE.match(href) and not href.startswith("//")


def split_href(href: str) -> tuple[str, str]:
    target, _, anchor = href.partition("#")
    return target, unquote(anchor)


def links_plugin(md: MarkdownIt) -> None:
    # markdown-it silently leaves `[x](file:///…)` and `[x](javascript:…)` as literal text; let them through
    # to be reported (below) instead, so an author learns the link is not published.
    md.validateLink = lambda url: True  # type: ignore[method-assign]

    def collect(state: Any) -> None:
        links = parse_context(state.env).facts.links
        for child, line in inline_children(state.tokens):
            if child.type == "link_open":
                href = str(child.attrGet("href") or "")
                scheme = url_scheme(href)  # as the browser reads it (builder/markup_policy.py)
                if scheme is not None and scheme not in LINK_SCHEMES:
                    context = parse_context(state.env)
                    context.problems.add(
                        Code.LINK,
                        context.rel,
                        context.line_offset + line + 1,
                        f"link '{unquote(href)}': '{scheme}:' URLs are not "
                        "allowed (link a page of the site or an https:// address)",
                    )
                elif is_internal(href):
                    links.append(Link(href, line))
                else:
                    child.attrSet("rel", "noopener noreferrer")
                    child.attrSet("target", "_blank")
                    child.attrJoin("class", "external")

    md.core.ruler.push("collect_links", collect)

    def link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
        token = tokens[idx]
        target, _ = split_href(str(token.attrGet("href") or ""))
        planned = parse_context(env).planned_slugs
        if target.endswith(".html") and target[:-5] in planned:
            token.meta["planned"] = True
            return '<span class="coming-soon-link" title="即将推出">'
        return self.renderToken(tokens, idx, options, env)

    def link_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict) -> str:
        # find the matching open token
        depth = 0
        for j in range(idx - 1, -1, -1):
            if tokens[j].type == "link_close":
                depth += 1
            elif tokens[j].type == "link_open":
                if depth == 0:
                    if tokens[j].meta.get("planned"):
                        return '<span class="badge-soon">即将推出</span></span>'
                    break
                depth -= 1
        return self.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("link_close", link_close)
