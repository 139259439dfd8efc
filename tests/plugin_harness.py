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


# ------------------------------------------------------------------------------------------------ fixture files
#
# A fixture file holds cases in mdit-py-plugins' `read_fixture_file` format: title / `.` / Markdown / `.` / expected /
# `.`. The expected block is exact: one line `ERROR path:line: message [code]` (or `WARNING …`) per reported problem,
# in the order the build prints them (a message may span several lines), then the exact HTML. `{known widgets}` in
# it stands for the names of the course's widget kinds (builder/course.py `Course.widgets`), so no fixture lists them.


def canonical(html: str, problems: list[str]) -> str:
    lines = [f"WARNING {p.replace(': warning: ', ': ', 1)}" if ": warning: " in p else f"ERROR {p}" for p in problems]
    return ("".join(f"{line}\n" for line in lines) + html).rstrip("\n")


def expected_text(expected: str, content_dir: Path) -> str:
    """A case's expected block with `{known widgets}` spelled out for the course of `content_dir`."""
    if "{known widgets}" in expected:
        from builder.course import load_course

        expected = expected.replace("{known widgets}", ", ".join(sorted(load_course(content_dir, ROOT).widgets)))
    return expected.rstrip("\n")


def fixture_params(path: Path, content_dir: Path, prefix: str | None = None) -> list:
    """One pytest param per case of the fixture file `path`: (source, expected, content_dir)."""
    import pytest
    from markdown_it.utils import read_fixture_file

    name = prefix or path.name
    return [
        pytest.param(source, expected, content_dir, id=f"{name}:{line + 1}:{title}")
        for line, title, source, expected in (read_fixture_file(path) if path.is_file() else [])
    ]


def check_fixture_case(source: str, expected: str, content_dir: Path) -> None:
    """Render the case as a page body of the course of `content_dir` with the tests' cache (a code cell's output is
    computed once for its code and the runtime, as the build does; a failing cell is never cached, so it runs every
    time) and compare with the expected block."""
    from tests.conftest import TEST_CACHE

    html, problems = render_snippet(source, content_dir=content_dir, cache_dir=TEST_CACHE)
    assert canonical(html, problems) == expected_text(expected, content_dir)
