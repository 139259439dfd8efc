"""Render a Markdown snippet through the site's real parser and body stages (builder/pipeline.py), for the
fixture tests of the syntax extensions and for unit tests of one page."""

from __future__ import annotations

from pathlib import Path

from builder import pipeline
from builder.model import BuildOptions, PageFacts, PlannedPage, SiteSource, SourcePage
from tests.conftest import ROOT

PLANNED = [PlannedPage("qkv-explained", "Q、K、V 详解", "explainer")]


def render_page(
    text: str,
    *,
    content_dir: Path | None = None,
    rel: str = "content/test.md",
    body_line: int = 0,
    cache_dir: Path | None = None,
    planned: list[PlannedPage] | None = None,
) -> tuple[str, list[str], PageFacts]:
    """(HTML, ["path:line: message [code]", …], the page's facts) of a page body (no front matter), through
    parse → run cells → typeset math → render, as the build does it."""
    content_dir = content_dir or ROOT / "content"
    options = BuildOptions(root=ROOT, content_dir=content_dir, cache_dir=cache_dir, python_runtime=False)
    source = SourcePage(
        path=content_dir / Path(rel).name,
        rel=rel,
        meta={"slug": "test", "title": "测试", "kind": "explainer"},
        body=text,
        body_line=body_line,
    )
    site = SiteSource(
        root=ROOT, content_dir=content_dir, series="s", title="t", planned=PLANNED if planned is None else planned
    )
    (page,), _ = pipeline.body_stages(pipeline.markdown_parser(options), site, [source], options)
    return page.body_html, [str(p) for p in page.context.problems.sorted()], page.facts


def render_snippet(text: str, **kwargs) -> tuple[str, list[str]]:
    """Return (HTML, ["path:line: message [code]", …]) for a Markdown body (no front matter)."""
    html, problems, _ = render_page(text, **kwargs)
    return html, problems
