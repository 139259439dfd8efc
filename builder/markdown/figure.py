"""Figures: ```{figure} figures/name.svg with a YAML body (`caption:`), inlined as accessible SVG.

Inlining (rather than <img>) lets the drawing use the theme's CSS variables, so it follows dark mode.
The SVG is checked: it must have <title> and <desc>, no scripts, no event handlers, nothing external.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from .. import strict_yaml
from ..errors import Code
from .directive import register_directive, report

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
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        return f"not well-formed XML: {exc}"
    if root.tag != SVG_NS + "svg":
        return "root element is not <svg> in the SVG namespace"
    children = [c for c in root if isinstance(c.tag, str)]
    tags = [c.tag.replace(SVG_NS, "") for c in children[:2]]
    if tags != ["title", "desc"]:
        return "the first two children must be <title> and <desc> (screen readers read them)"
    if not (children[0].text or "").strip() or not (children[1].text or "").strip():
        return "<title> and <desc> must not be empty"
    if "viewBox" not in root.attrib:
        return "the <svg> needs a viewBox"
    for el in root.iter():
        tag = el.tag.replace(SVG_NS, "") if isinstance(el.tag, str) else ""
        if tag in ("script", "foreignObject"):
            return f"<{tag}> is not allowed"
        for name, value in el.attrib.items():
            local = name.split("}")[-1]
            if local.lower().startswith("on"):
                return f"event handler attribute '{local}' is not allowed"
            if local == "href" and not value.startswith("#"):
                return f"external reference '{value}' is not allowed (only #ids)"
    return None


def figure_plugin(md: MarkdownIt, *, content_dir: Path) -> None:
    def render(token: Token, env: dict) -> str:
        src = token.info.strip()
        try:
            options = strict_yaml.load(token.content) if token.content.strip() else {}
        except yaml.YAMLError as exc:
            report(env, Code.FIGURE, token, f"figure options are not valid YAML: {exc}", offset=1)
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
        path = (content_dir / src).resolve()
        if not src or not path.is_relative_to(content_dir.resolve()) or path.suffix != ".svg":
            report(env, Code.FIGURE, token, f"figure source must be an .svg file inside content/, got '{src}'")
            return ""
        if not path.exists():
            report(env, Code.FIGURE, token, f"figure file not found: {src}")
            return ""
        text = path.read_text(encoding="utf-8")
        reason = check_svg(text)
        if reason:
            report(env, Code.FIGURE, token, f"{src}: {reason}")
            return ""
        svg = re.sub(r"^\s*<\?xml[^>]*\?>\s*", "", text).strip()
        svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
        if 'role="img"' not in svg[: svg.index(">")]:
            svg = svg.replace("<svg", '<svg role="img"', 1)
        svg = svg.replace("<svg", '<svg class="figure-svg" focusable="false"', 1)
        caption = options.get("caption")
        cap_html = f"<figcaption>{md.renderInline(str(caption), env)}</figcaption>" if caption else ""
        # On a screen narrower than the drawing's minimum width the box scrolls sideways; theme/js/site/scroll-hint.js
        # then makes it focusable (arrow keys scroll it), fades the hidden side and shows the hint.
        scroll = (
            f'<div class="figure-scroll" style="--figure-min-width: {min_width_px(svg)}px">{svg}</div>'
            '<p class="figure-scroll-hint" aria-hidden="true">← 左右滑动查看整张图 →</p>'
        )
        return f'<figure class="figure">{scroll}{cap_html}</figure>\n'

    register_directive(md, "figure", render)
