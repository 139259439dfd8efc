"""Raw HTML in Markdown: checked, so nothing on a page loads from outside the site (Markdown images: images.py).

The policy (docs/authoring.md): raw HTML may use the tags and attributes of `SAFE_TAGS` / `ATTRIBUTES`; a
`<script>`, `<iframe>`, `<style>` or any other element, an event handler (`on…=`), a `javascript:` URL or a
reference to a resource outside the site (`src`, `srcset`, a `url()` in `style`) is a build error naming
`path:line`. A raw `<a href="https://…">` to a paper stays allowed and gets `rel="noopener noreferrer"`.

markdown-it hands raw HTML over in fragments (`<details>` … Markdown … `</details>`, one `<span>` per inline
token), and a sanitiser that re-parses a fragment closes and drops tags, so each fragment is tokenised with
the standard library's HTML tokenizer, which reports start tags one at a time without re-nesting them, and
every start tag is judged by nh3 (Ammonia, the maintained Rust sanitiser): what it drops is what breaks the
policy. A clean fragment is published as written.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..errors import Code
from ..markup_policy import LINK_SCHEMES, css_problems, is_outside, url_scheme
from ..model import parse_context
from ..reserved_ids import reserved_message

SAFE_TAGS = set(nh3.ALLOWED_TAGS) | {"img", "picture", "source", "section"}
ATTRIBUTES = {
    "*": {"class", "id", "title", "lang", "dir", "style", "role", "hidden", "tabindex", "align"},
    "a": {"href", "name", "target"},
    "img": {"src", "srcset", "alt", "width", "height", "loading", "sizes"},
    "source": {"srcset", "type", "media", "sizes"},
    "ol": {"start", "reversed", "type"},
    "details": {"open"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "col": {"span"},
    "colgroup": {"span"},
    "time": {"datetime"},
    "data": {"value"},
    "abbr": {"title"},
}
URL_SCHEMES = LINK_SCHEMES
RESOURCE_ATTRIBUTES = {"src", "srcset"}  # attributes the browser fetches (nh3 drops every other kind)


def resource_urls(attr: str, value: str) -> list[str]:
    if attr == "srcset":
        return [part.strip().split()[0] for part in value.split(",") if part.strip()]
    return [value]


class _StartTags(HTMLParser):
    """Every start tag of a fragment: (its text, tag, attributes, 1-based line in the fragment)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, str, list[tuple[str, str | None]], int]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((self.get_starttag_text() or "", tag, attrs, self.getpos()[0]))

    handle_startendtag = handle_starttag


def start_tags(fragment: str) -> list[tuple[str, str, list[tuple[str, str | None]], int]]:
    parser = _StartTags()
    parser.feed(fragment)
    parser.close()
    return parser.tags


def judge_tag(text: str, tag: str, attrs: list[tuple[str, str | None]]) -> tuple[list[str], str]:
    """(reasons the start tag breaks the policy, the tag to publish)."""
    if tag not in SAFE_TAGS:
        return [f"<{tag}> is not allowed in raw HTML"], text
    outside: list[str] = []

    def keep(element: str, attr: str, value: str) -> str | None:
        if attr == "style":  # the one CSS rule of figures and raw HTML alike (builder/markup_policy.py)
            css = css_problems(value)
            if css:
                outside.append(f"<{element} {attr}> {css[0]}")
                return None
        elif attr in RESOURCE_ATTRIBUTES:
            urls = [u for u in resource_urls(attr, value) if is_outside(u)]
            if urls:
                outside.append(f"<{element} {attr}> loads '{urls[0]}' from outside the site")
                return None
        return value

    cleaned = nh3.clean(
        text,
        tags=SAFE_TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        generic_attribute_prefixes={"data-", "aria-"},
        link_rel="noopener noreferrer",
        attribute_filter=keep,
    )
    kept = dict(start_tags(cleaned)[0][2]) if start_tags(cleaned) else {}
    reasons = list(outside)
    for name, value in attrs:
        if name in kept or any(r.startswith(f"<{tag} {name}>") for r in outside):
            continue
        scheme = url_scheme(value or "")
        if name.startswith("on"):
            reasons.append(f"event handler attribute '{name}' is not allowed")
        elif scheme and scheme not in URL_SCHEMES:
            reasons.append(f"'{scheme}:' URL in <{tag} {name}> is not allowed")
        else:
            reasons.append(f"attribute '{name}' is not allowed on <{tag}>")
    for name, value in attrs:
        taken = reserved_message(value or "") if name == "id" else None
        if taken:
            reasons.append(f"<{tag}> {taken}")
    if tag == "a" and is_outside(kept.get("href") or ""):  # an external link: published with nh3's rel
        return reasons, re.sub(rf"</{tag}>$", "", cleaned)
    return reasons, text


def check_fragment(fragment: str) -> tuple[list[tuple[int, str]], str]:
    """([(0-based line in the fragment, reason)], the fragment to publish)."""
    problems: list[tuple[int, str]] = []
    out = fragment
    for text, tag, attrs, line in start_tags(fragment):
        reasons, published = judge_tag(text, tag, attrs)
        problems.extend((line - 1, reason) for reason in reasons)
        if published != text:
            out = out.replace(text, published, 1)
    return problems, out


def raw_html_plugin(md: MarkdownIt) -> None:
    def check(state: Any) -> None:
        context = parse_context(state.env)

        def report(line: int, message: str) -> None:
            context.problems.add(Code.HTML, context.rel, context.line_offset + line + 1, message)

        def visit(token: Token, line: int) -> None:
            if token.type in ("html_block", "html_inline"):
                problems, token.content = check_fragment(token.content)
                for offset, reason in problems:
                    report(line + offset, f"raw HTML: {reason}")

        for token in state.tokens:
            line = token.map[0] if token.map else 0
            visit(token, line)
            for child in token.children or []:
                if child.type in ("softbreak", "hardbreak"):
                    line += 1
                visit(child, line)
                line += child.content.count("\n") if child.type == "html_inline" else 0

    md.core.ruler.push("raw_html", check)
