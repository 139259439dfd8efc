"""Markdown images: `![alt](figures/plot.png)` is checked like a link and copied into the site.

A local image (relative to content/, inside it) must exist; it is published as
`assets/images/<name>-<content hash><suffix>` (so a changed file gets a new URL) and recorded in
`PageFacts.images`, which the write stage copies. An image with a scheme (`https:`, `data:`, `file:`) or
`//host/…` would load from outside the site: a build error, like one that is missing.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt

from ..errors import Code
from ..markup_policy import is_outside, parse_svg, svg_problems
from ..model import parse_context
from ..source_text import SourceTextError, read_text

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".avif"}


def published_name(path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:10]
    return f"assets/images/{path.stem}-{digest}{path.suffix.lower()}"


def _svg_problem(path: Path) -> str | None:
    """An SVG image is published as a file of the site: opened on its own it is a document of the site's origin,
    so it passes the same markup policy as an inlined figure (builder/markup_policy.py)."""
    try:
        problems = svg_problems(parse_svg(read_text(path)))
    except SourceTextError as exc:
        return f"line {exc.line}: {exc.message}" if exc.line else exc.message
    except ValueError as exc:
        return str(exc)
    return problems[0] if problems else None


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
                local = root / written.partition("#")[0].partition("?")[0]
                path = local.resolve()
                if path.suffix.lower() not in IMAGE_SUFFIXES or not Path(os.path.normpath(local)).is_relative_to(root):
                    report(
                        line,
                        f"image '{written}' must be an image file inside content/ "
                        f"({', '.join(sorted(IMAGE_SUFFIXES))})",
                    )
                elif not path.is_relative_to(root):
                    report(
                        line,
                        f"image '{written}': it is a symbolic link to {path}, outside the content folder: the build "
                        "reads only files inside it (copy the file in instead)",
                    )
                elif not path.is_file():
                    report(line, f"image not found: {written}")
                elif path.suffix.lower() == ".svg" and (reason := _svg_problem(path)):
                    report(line, f"image '{written}': {reason}")
                else:
                    name = published_name(path)
                    # within the content folder: a cached page is reused by a moved or copied project
                    context.facts.images[name] = path.relative_to(root).as_posix()
                    child.attrSet("src", name)

    md.core.ruler.push("images", check)
