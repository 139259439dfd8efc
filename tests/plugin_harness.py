"""Render a Markdown snippet through the site's real parser and stages, for fixture tests of plugins."""
from __future__ import annotations

from pathlib import Path

from builder.content import PlannedPage, SiteSource, SourcePage
from builder.errors import Problems
from builder.markdown import create_markdown
from builder.site import BuildOptions, Page, directive_plugins, new_env, typeset_math

from tests.conftest import ROOT


def render_snippet(text: str, *, content_dir: Path | None = None, rel: str = "content/test.md",
                   body_line: int = 0) -> tuple[str, list[str]]:
    """Return (HTML, ["path:line: message [code]", …]) for a Markdown body (no front matter)."""
    content_dir = content_dir or ROOT / "content"
    options = BuildOptions(content_dir=content_dir, cache_dir=None, python_runtime=False)
    md = create_markdown(content_dir=content_dir, extra_plugins=directive_plugins(options))
    md.options["build_options"] = options
    problems = Problems()
    source = SourcePage(path=content_dir / Path(rel).name, rel=rel, meta={"slug": "test", "title": "测试", "kind": "explainer"},
                        body=text, body_line=body_line)
    site = SiteSource(root=ROOT, content_dir=content_dir, series="s", title="t",
                      planned=[PlannedPage("qkv-explained", "Q、K、V 详解", "explainer")])
    env = new_env(source, site, problems)
    page = Page(source, md.parse(text, env), env)
    typeset_math([page], None, problems)
    html = md.renderer.render(page.tokens, md.options, env)
    return html, [str(p) for p in problems.sorted()]
