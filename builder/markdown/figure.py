"""Figures: ```{figure} figures/name.svg with a YAML body (`caption:`), inlined as accessible SVG.

Inlining (rather than <img>) lets the drawing use the theme's CSS variables, so it follows dark mode.
The SVG is checked: it must have <title> and <desc> and a viewBox, and pass the markup policy
(builder/markup_policy.py: an allow-list of elements and attributes, CSS checked after unescaping, links only to
its own #ids, no id the theme uses); the checked tree is what the page inlines.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

from .. import strict_yaml
from ..errors import Code
from ..markup_policy import parse_svg, serialize_svg, svg_problems
from ..reserved_ids import reserved_message
from ..source_text import SourceTextError, read_text
from .directive import parse_inline_at, register_directive, render_inline_tokens, report

SVG_NS = "{http://www.w3.org/2000/svg}"
FIGURE_OPTIONS = {"caption", "alt"}
MIN_TEXT_PX = 12  # the smallest label must render at least this large, also on a 390 px phone
FONT_SIZE_RE = re.compile(r"font-size\s*[:=]\s*\"?\s*([0-9.]+)(?:px)?")
DEFAULT_SVG_FONT_PX = 16.0


def min_width_px(svg: str) -> int:
    """The narrowest the drawing may be shown so its smallest text is still MIN_TEXT_PX: viewBox width × 12 ÷ the
    smallest font size (user units). Narrower screens scroll it sideways (theme/js/site/scroll-hint.js)."""
    box = re.search(r'viewBox="\s*[-0-9.]+[ ,]+[-0-9.]+[ ,]+([0-9.]+)', svg)
    sizes = [float(x) for x in FONT_SIZE_RE.findall(svg)] or [DEFAULT_SVG_FONT_PX]
    width = float(box.group(1)) if box else 0.0
    return int(-(-width * MIN_TEXT_PX // min(sizes)))  # ceiling


def check_svg(text: str) -> str | None:
    """Return a reason the SVG is unacceptable, or None."""
    reasons = svg_reasons(text)[0]
    return reasons[0] if reasons else None


PAINT_PROPERTIES = ("fill", "stroke", "color", "stop-color", "flood-color", "lighting-color")
THEME_PAINT_RE = re.compile(
    r"^(?:none|currentcolor|inherit|transparent|context-fill|context-stroke|var\(\s*--.*|url\(\s*['\"]?#.*)$",
    re.IGNORECASE | re.DOTALL,
)
"""A paint that follows the page: none, currentColor, the theme's CSS variables (`var(--fg)` …), or a paint server
of the drawing itself (`url(#gradient)`, whose stops follow the same rule)."""


def theme_problems(root: ET.Element) -> list[str]:
    """Why an inlined figure would not follow the page (empty: it does): a fixed size on the root (`width`, `height`:
    the viewBox scales the drawing to the text column) or a fixed colour (dark mode would keep it). Inside a <mask>
    colours are luminance, not paint, and stay free."""
    import tinycss2

    problems = [
        f'the <svg> has a fixed {name}="{root.get(name)}": leave it out (the viewBox scales the drawing to the column)'
        for name in ("width", "height")
        if name in root.attrib
    ]
    masked = {id(el) for mask in root.iter(SVG_NS + "mask") for el in mask.iter()}

    def check(where: str, prop: str, value: str) -> None:
        value = value.strip()
        if prop.lower() in PAINT_PROPERTIES and value and not THEME_PAINT_RE.match(value):
            problems.append(
                f"{where} {prop}: {value} is a fixed colour: use currentColor or the theme's variables (var(--fg), "
                "var(--muted), var(--accent), var(--accent-2), var(--surface), var(--border)) so it follows dark mode"
            )

    def declarations(css: str) -> list[tuple[str, str]]:
        decls = tinycss2.parse_blocks_contents(css, skip_whitespace=True, skip_comments=True)
        return [(d.lower_name, tinycss2.serialize(d.value)) for d in decls if d.type == "declaration"]

    for el in root.iter():
        if not isinstance(el.tag, str) or id(el) in masked:
            continue
        tag = el.tag.replace(SVG_NS, "")
        for name, value in el.attrib.items():
            if name in PAINT_PROPERTIES:
                check(f"<{tag}>", name, value)
            elif name == "style":
                for prop, text in declarations(value):
                    check(f"<{tag}>", prop, text)
        if tag == "style":
            for rule in tinycss2.parse_stylesheet(el.text or "", skip_whitespace=True, skip_comments=True):
                if rule.type == "qualified-rule":
                    selector = tinycss2.serialize(rule.prelude).strip()
                    for prop, text in declarations(tinycss2.serialize(rule.content)):
                        check(f"<style> rule '{selector}':", prop, text)
    return list(dict.fromkeys(problems))


def svg_reasons(text: str) -> tuple[list[str], ET.Element | None]:
    """(every reason the SVG figure is unacceptable, its checked tree): the drawing's structure (title, desc,
    viewBox: what screen readers and the layout need) and the markup policy (builder/markup_policy.py)."""
    try:
        root = parse_svg(text)
    except ValueError as exc:
        return [str(exc)], None
    if root.tag != SVG_NS + "svg":
        return ["root element is not <svg> in the SVG namespace"], None
    children = [c for c in root if isinstance(c.tag, str)]
    tags = [c.tag.replace(SVG_NS, "") for c in children[:2]]
    if tags != ["title", "desc"]:
        return ["the first two children must be <title> and <desc> (screen readers read them)"], None
    if not (children[0].text or "").strip() or not (children[1].text or "").strip():
        return ["<title> and <desc> must not be empty"], None
    if "viewBox" not in root.attrib:
        return ["the <svg> needs a viewBox"], None
    reasons = svg_problems(root)
    for el in root.iter():
        taken = reserved_message(el.get("id") or "")
        if taken:
            reasons.append(f"<{el.tag.replace(SVG_NS, '')}> {taken}")
    return reasons, root


def _lexically_inside(path: Path, folder: Path) -> bool:
    """Is `path` inside `folder` as written (`..` resolved, symbolic links not followed)?"""
    return Path(os.path.normpath(path.absolute())).is_relative_to(Path(os.path.normpath(folder.absolute())))


def figure_plugin(md: MarkdownIt, *, content_dir: Path) -> None:
    def render(token: Token, env: dict) -> str:
        src = token.info.strip()
        try:
            options = strict_yaml.load(token.content) if token.content.strip() else {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or exc
            report(
                env,
                Code.FIGURE,
                token,
                f"figure options are not valid YAML: {problem}",
                offset=1 + (mark.line if mark else 0),
            )
            return ""
        if not isinstance(options, dict):
            report(env, Code.FIGURE, token, "figure options must be `key: value` lines", offset=1)
            return ""
        body_lines = token.content.split("\n")
        for key in options:
            if key not in FIGURE_OPTIONS:
                offset = 1 + next((i for i, ln in enumerate(body_lines) if ln.startswith(f"{key}:")), -1)
                report(
                    env,
                    Code.FIGURE,
                    token,
                    f"unknown figure option '{key}' (allowed: {', '.join(sorted(FIGURE_OPTIONS))})",
                    offset=offset,
                )
        written = content_dir / src
        path = written.resolve()
        if not src or not _lexically_inside(written, content_dir) or path.suffix != ".svg":
            report(env, Code.FIGURE, token, f"figure source must be an .svg file inside content/, got '{src}'")
            return ""
        if not path.is_relative_to(content_dir.resolve()):
            report(
                env,
                Code.FIGURE,
                token,
                f"{src}: it is a symbolic link to {path}, outside the content folder: "
                "the build reads only files inside it (copy the file in instead)",
            )
            return ""
        if not path.exists():
            report(env, Code.FIGURE, token, f"figure file not found: {src}")
            return ""
        try:
            text = read_text(path)
        except SourceTextError as exc:
            report(env, Code.FIGURE, token, f"{src}{f' line {exc.line}' if exc.line else ''}: {exc.message}")
            return ""
        reasons, root = svg_reasons(text)
        if root is not None and not reasons:  # a drawing the policy accepts: does it follow the page?
            reasons = theme_problems(root)
        if reasons or root is None:
            for reason in reasons:
                report(env, Code.FIGURE, token, f"{src}: {reason}")
            return ""
        svg = serialize_svg(root).replace(" />", "/>")  # what was checked is what is published
        if 'role="img"' not in svg[: svg.index(">")]:
            svg = svg.replace("<svg", '<svg role="img"', 1)
        svg = svg.replace("<svg", '<svg class="figure-svg" focusable="false"', 1)
        caption = options.get("caption")
        parsed = token.meta.get("caption")
        cap_html = render_inline_tokens(md, parsed, env) if parsed is not None else escapeHtml(str(caption or ""))
        cap_html = f"<figcaption>{cap_html}</figcaption>" if caption else ""
        # On a screen narrower than the drawing's minimum width the box scrolls sideways; theme/js/site/scroll-hint.js
        # then makes it focusable (arrow keys scroll it), fades the hidden side and shows the hint.
        scroll = (
            f'<div class="figure-scroll" style="--figure-min-width: {min_width_px(svg)}px">{svg}</div>'
            '<p class="figure-scroll-hint" aria-hidden="true">← 左右滑动查看整张图 →</p>'
        )
        return f'<figure class="figure">{scroll}{cap_html}</figure>\n'

    register_directive(md, "figure", render)

    def parse_captions(state: Any) -> None:
        """A caption is Markdown: parsed with the page (formulas typeset, links checked, problems at its line);
        the options themselves are checked when the figure is rendered."""
        for token in state.tokens:
            if token.type != "figure" or token.map is None:
                continue
            try:
                options = strict_yaml.load(token.content) if token.content.strip() else {}
            except yaml.YAMLError:
                continue
            caption = options.get("caption") if isinstance(options, dict) else None
            if caption:
                lines = token.content.split("\n")
                offset = 1 + next((i for i, ln in enumerate(lines) if ln.startswith("caption:")), 0)
                token.meta["caption"] = parse_inline_at(md, str(caption), state.env, token.map[0] + offset)

    md.core.ruler.after("directive_figure", "figure_captions", parse_captions)
