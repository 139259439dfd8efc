"""builder/katex/shared_paths.py: a page writes each SVG path KaTeX repeats once, and nothing else changes."""

from __future__ import annotations

from builder.katex.shared_paths import share_svg_paths, unshare_svg_paths


def svg(d: str) -> str:
    return (
        f'<svg width="400em" height="1.08em" viewBox="0 0 400000 1080" preserveAspectRatio="xMinYMin slice">'
        f'<path d="{d}"/></svg>'
    )


def test_a_path_drawn_twice_is_written_once_and_used_twice() -> None:
    body = f"<p>{svg('M1 2z')} and {svg('M1 2z')} and {svg('M9 9z')}</p>\n"
    shared = share_svg_paths(body)
    assert shared.count('d="M1 2z"') == 1  # one definition …
    assert shared.count('<use href="#katex-path-1"/>') == 2  # … used by both drawings
    assert shared.count('d="M9 9z"') == 1 and "katex-path-2" not in shared  # drawn once: left as it was
    assert 'stroke="none"' in shared  # as `.katex svg path {stroke: none}` does for KaTeX's own paths
    assert unshare_svg_paths(shared) == body


def test_a_body_without_repeats_is_unchanged() -> None:
    body = f"<p>{svg('M1 2z')}</p>"
    assert share_svg_paths(body) == body == unshare_svg_paths(body)
