"""One copy per page of each SVG path KaTeX draws more than once (`share_svg_paths`).

KaTeX draws square roots, long arrows and braces as inline `<svg>` with the same `<path d="…">` every time (a square
root's path is ~490 bytes; module 05 has ten), which counted for ~6 KB of the page's first view (issue 19: ≤ 300 KB).
A path used twice or more is written once, at the start of the body, in a hidden `<svg>`, and each drawing becomes a
`<use href="#…">` of it — the same pixels (the `<use>` inherits `.katex svg`'s fill from its own `<svg>`; the
shared path says `stroke="none"`, as `.katex svg path` does for KaTeX's own). The definitions come before any
section of the page, so a section not yet rendered (`content-visibility`) never holds the path another one uses."""

from __future__ import annotations

import re
from collections import Counter

# KaTeX's own drawings only: an <svg> whose only child is one <path> (compact.py has removed the xmlns).
_KATEX_SVG_PATH_RE = re.compile(
    r'(<svg width="[^"]*" height="[^"]*" viewBox="[^"]*" preserveAspectRatio="[^"]*">)'
    r'<path d="([^"]*)"/></svg>'
)
ID_PREFIX = "katex-path-"


def share_svg_paths(body_html: str) -> str:
    counts = Counter(m.group(2) for m in _KATEX_SVG_PATH_RE.finditer(body_html))
    shared = {d: f"{ID_PREFIX}{i}" for i, d in enumerate((d for d, n in counts.items() if n > 1), start=1)}
    if not shared:
        return body_html

    def use(m: re.Match[str]) -> str:
        ident = shared.get(m.group(2))
        return f'{m.group(1)}<use href="#{ident}"/></svg>' if ident else m.group(0)

    defs = "".join(f'<path id="{ident}" d="{d}" stroke="none"/>' for d, ident in shared.items())
    head = (
        f'<svg class="katex-shared-paths" width="0" height="0" aria-hidden="true" focusable="false" '
        f'style="position:absolute">{defs}</svg>\n'
    )
    return head + _KATEX_SVG_PATH_RE.sub(use, body_html)


_SHARED_HEAD_RE = re.compile(r'<svg class="katex-shared-paths"[^>]*>(.*?)</svg>\n', re.S)
_SHARED_PATH_RE = re.compile(r'<path id="([^"]*)" d="([^"]*)" stroke="none"/>')
_USE_RE = re.compile(r'<use href="#(' + ID_PREFIX + r'\d+)"/>')


def unshare_svg_paths(body_html: str) -> str:
    """The inverse of share_svg_paths: each formula as KaTeX typeset it (to find a formula's own HTML in a body)."""
    head = _SHARED_HEAD_RE.match(body_html)
    if not head:
        return body_html
    paths = dict(_SHARED_PATH_RE.findall(head.group(1)))
    return _USE_RE.sub(lambda m: f'<path d="{paths[m.group(1)]}"/>', body_html[head.end() :])


__all__ = ["share_svg_paths", "unshare_svg_paths", "ID_PREFIX"]
