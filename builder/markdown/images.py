"""Markdown images: `![alt](figures/plot.png)` is checked like a link and copied into the site.

A local image (relative to content/, inside it) must exist; it is published as
`assets/images/<name>-<content hash><suffix>` (so a changed file gets a new URL) and recorded in
`PageFacts.images`, which the write stage copies. An image with a scheme (`https:`, `data:`, `file:`) or
`//host/…` would load from outside the site: a build error, like one that is missing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt

from ..errors import Code
from ..model import parse_context
from .raw_html import is_outside

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".avif"}


def published_name(path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:10]
    return f"assets/images/{path.stem}-{digest}{path.suffix.lower()}"


def images_plugin(md: MarkdownIt, *, content_dir: Path) -> None:
    root = content_dir.resolve()

    def check(state: Any) -> None:
        context = parse_context(state.env)

        def report(line: int, message: str) -> None:
            context.problems.add(Code.IMAGE, context.rel, context.line_offset + line + 1, message)

        for token in state.tokens:
            line = token.map[0] if token.map else 0
            for child in token.children or []:
                if child.type in ("softbreak", "hardbreak"):
                    line += 1
                if child.type != "image":
                    continue
                src = str(child.attrGet("src") or "")
                written = unquote(src)
                if is_outside(src):
                    report(
                        line, f"image '{written}' is outside the site: save it under content/ and link it relatively"
                    )
                    continue
                path = (root / written.partition("#")[0].partition("?")[0]).resolve()
                if not path.is_relative_to(root) or path.suffix.lower() not in IMAGE_SUFFIXES:
                    report(
                        line,
                        f"image '{written}' must be an image file inside content/ "
                        f"({', '.join(sorted(IMAGE_SUFFIXES))})",
                    )
                elif not path.is_file():
                    report(line, f"image not found: {written}")
                else:
                    name = published_name(path)
                    context.facts.images[name] = str(path)
                    child.attrSet("src", name)

    md.core.ruler.push("images", check)
