"""The build pipeline, in a fixed and visible order:

    load content → parse Markdown (all pages) → check links → typeset math → render pages
    → templates → assets → write to a temporary folder → swap it into place

Nothing touches the output folder until every stage has succeeded, so a failed build leaves the previous
site intact. Every problem is collected and reported as `path:line: message`.
"""
from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import assets, checks, incremental, math as mathstage, output, search_index
from .content import SiteSource, SourcePage, load_site
from .errors import BuildFailed, Code, Problems
from .markdown import create_markdown

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class BuildOptions:
    root: Path = ROOT
    content_dir: Path = ROOT / "content"
    theme_dir: Path = ROOT / "theme"
    out_dir: Path = ROOT / "site"
    cache_dir: Path | None = ROOT / ".cache"
    pyodide_dir: Path | None = None
    python_runtime: bool = True  # copy Pyodide into the site (tests of the pipeline may turn it off)
    jobs: int | None = None  # worker processes for rendering pages (None: all cores; 1: in-process)


@dataclass
class Page:
    """One page travelling through the stages; `html` is filled by the render stage."""

    source: SourcePage
    tokens: list[Any]
    env: dict[str, Any]
    html: str | None = None

    @property
    def anchors(self) -> set[str]:
        return set(self.env.get("heading_ids", set())) | set(self.env.get("extra_ids", set()))

    @property
    def features(self) -> set[str]:
        return self.env.setdefault("features", set())

    @property
    def body_html(self) -> str:
        if self.html is None:
            raise RuntimeError(f"{self.source.rel}: page used before it was rendered")
        return self.html


@dataclass
class BuildResult:
    pages: int
    formulas: int
    formulas_rendered: int
    seconds: float
    out_dir: Path
    files: dict[str, bytes] = field(default_factory=dict)

    def summary(self) -> str:
        return (f"built {self.pages} pages, {self.formulas} formulas ({self.formulas_rendered} typeset, rest cached) "
                f"in {self.seconds:.2f} s → {self.out_dir}")


def directive_plugins(options: BuildOptions) -> list[Callable[[Any], None]]:
    """Directive plugins contributed by other stages (widgets, code cells, quizzes)."""
    plugins: list[Callable[[Any], None]] = []
    try:
        from .widgets import markdown_plugin as widgets_plugin
        plugins.append(widgets_plugin)
    except ImportError:
        pass
    try:
        from .cells import markdown_plugin as cells_plugin
        plugins.append(cells_plugin)
    except ImportError:
        pass
    try:
        from .quiz import markdown_plugin as quiz_plugin
        plugins.append(quiz_plugin)
    except ImportError:
        pass
    return plugins


def new_env(page: SourcePage, site: SiteSource, problems: Problems) -> dict[str, Any]:
    return {
        "rel": page.rel,
        "line_offset": page.body_line,
        "problems": problems,
        "page": page,
        "planned_slugs": {p.slug for p in site.planned},
        "features": set(),
    }


def parse_pages(site: SiteSource, md: Any, problems: Problems) -> list[Page]:
    result = []
    for source in site.pages:
        env = new_env(source, site, problems)
        tokens = md.parse(source.body, env)
        result.append(Page(source, tokens, env))
    return result


def typeset_math(pages: list[Page], cache_dir: Path | None, problems: Problems) -> tuple[int, int]:
    all_formulas = {f for p in pages for f, _ in p.env.get("formulas", [])}
    cache = mathstage.MathCache(cache_dir / "katex.sqlite" if cache_dir else None)
    try:
        html, errors, fresh = mathstage.render_all(all_formulas, cache)
    finally:
        cache.close()
    for page in pages:
        page.env["math_html"] = html
        for formula, line in page.env.get("formulas", []):
            if formula in errors:
                tex = formula[0] if len(formula[0]) < 120 else formula[0][:117] + "…"
                problems.add(Code.MATH, page.source.rel, page.source.body_line + line + 1,
                             f"KaTeX cannot typeset `{tex}`: {errors[formula]}")
    return sum(len(p.env.get("formulas", [])) for p in pages), fresh


def write_output(files: dict[str, bytes], out_dir: Path, writers: list[Callable[[Path], None]] | None = None) -> None:
    """Write every file into a fresh temporary folder next to `out_dir`, then swap it into place.

    `writers` are called with the temporary folder to add large files (the Python runtime) without
    holding them in memory; if one raises, the previous site stays in place. Unchanged files are hard
    links to the previous site's (builder/output.py).
    """
    output.write_site(files, out_dir, writers)


def build_site(options: BuildOptions | None = None) -> BuildResult:
    """Build the whole site; raises BuildFailed (with every problem) and leaves `out_dir` untouched on error."""
    options = options or BuildOptions()
    started = time.perf_counter()
    problems = Problems()

    pool = incremental.early_pool(options)  # workers start up while the content loads (a cold build only)
    try:
        site = incremental.load_site_cached(options, problems)  # = load_site(), cached by the content files' hash
        if problems:
            raise BuildFailed(problems)

        md = create_markdown(content_dir=options.content_dir, extra_plugins=directive_plugins(options))
        md.options["build_options"] = options
        # parse + typeset math + render each page: from the page cache, or in parallel (builder/incremental.py)
        pages, n_formulas, n_fresh = incremental.render_bodies(site, md, options, problems, pool)
    finally:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)  # no-op once render_bodies has used it
    checks.check_links(pages, {p.slug for p in site.planned}, problems)

    files: dict[str, bytes] = {}
    if not problems:
        try:
            files.update(incremental.assets_cached(options, assets.build_assets))
        except assets.AssetError as exc:
            problems.add(Code.ASSET, exc.path, None, str(exc))
    if not problems:
        # (each stage re-runs only when its inputs changed: builder/incremental.py)
        files.update(incremental.by_pages_cached(  # before templates: they link it with its hash
            options, "search", pages, lambda: search_index.search_index_files(pages)))
        katex = {name: data for name, data in files.items() if name.startswith("assets/katex/")}
        files.update(mathstage.site_katex_assets_cached(  # only the CSS rules and glyphs the site's formulas use
            katex, (f for p in pages for f, _ in p.env.get("formulas", [])), options.cache_dir))
        urls = assets.asset_urls(files)
        files.update(incremental.templates_cached(options, site, pages, urls, problems))
    if problems:
        raise BuildFailed(problems)

    try:
        write_output(files, options.out_dir, assets.output_writers(options, pages))
    except assets.AssetError as exc:
        problems.add(Code.ASSET, exc.path, None, str(exc))
        raise BuildFailed(problems) from exc
    return BuildResult(pages=len(pages), formulas=n_formulas, formulas_rendered=n_fresh,
                       seconds=time.perf_counter() - started, out_dir=options.out_dir, files=files)
