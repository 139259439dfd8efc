"""The build, stage by stage, in the order it runs:

    load → parse all → run cells → verify exercises → typeset math → render bodies → check links
         → assets → search index → KaTeX assets → pages → write

Each stage takes and returns the typed objects of builder/model.py. The four body stages (parse … render) run
for the pages the page cache misses, in worker processes when many do (builder/page_cache.py); every other
stage is cached as a whole by the hash of its inputs (`cached`, builder/cache.py). Caching wraps stages, it
never replaces them. Nothing touches the output folder before the last stage, so a failed build leaves the
previous site intact; every problem is collected and reported as `path:line: message [code]`.
"""

from __future__ import annotations

import shutil
import time
from functools import partial
from pathlib import Path

from markdown_it import MarkdownIt

from . import assets, checks, katex, output, page_cache, pages, progress, search_index
from . import cache as cachestore
from .cells import CellEnvironment, render_cell, run_cells_of_pages
from .content import load_glossary, load_site
from .course import CourseError, load_course
from .data_sources import fetch_missing
from .errors import AssetError, BuildFailed, Code, Problems
from .exercises import render_exercise, verify_exercises_of_pages
from .katex.shared_paths import share_svg_paths
from .markdown import check_answer_positions, create_markdown
from .model import BuildOptions, BuildResult, Page, ParseContext, SiteSource, SourcePage
from .numerics import one_blas_thread
from .runtime import pyodide_source, python_runtime
from .widgets import prepare_widget, quote_widget, render_widget


def build_site(options: BuildOptions | None = None) -> BuildResult:
    """Build the whole site; raises BuildFailed (with every problem) and leaves `out_dir` untouched on error.
    NumPy's BLAS runs on one thread throughout, so the numbers do not depend on the machine (builder/numerics.py)."""
    with one_blas_thread():
        return _build_site(options or BuildOptions())


def _build_site(options: BuildOptions) -> BuildResult:
    started = time.perf_counter()
    problems = Problems()
    refused = output.output_refusal(options)  # before any work: the build never deletes what it did not make
    if refused:
        problems.add(Code.OUTPUT, str(options.out_dir), None, f"will not write the site here: {refused}")
        raise BuildFailed(problems)

    pool = page_cache.early_pool(options, markdown_parser)  # workers start while the content loads (cold, large sites)
    try:
        try:
            with progress.stage("load"):
                site = load(options, problems)
            if problems:
                raise BuildFailed(problems)
            # parse all → run cells → typeset math → render bodies, for the pages the page cache misses (the time
            # of the pages rendered in worker processes, and of the cache's look-ups, is "page bodies")
            with progress.stage("page bodies"):
                built, n_fresh = page_cache.page_bodies(site, options, problems, body_stages, markdown_parser, pool)
        finally:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)  # no-op once page_bodies has used it
        with progress.stage("check links"):
            checks.check_links(built, site.planned_slugs, problems)
            check_answer_positions(built, problems)
        if problems:
            raise BuildFailed(problems)
    except BaseException:
        raise

    with progress.stage("assets"):
        # a copy (the cached dict is shared with later builds), without the widget kinds no page shows
        used = set().union(*(pages.widget_kinds(page.features) for page in built))
        kinds = load_course(options.content_dir, options.root).widget_folders
        files = assets.without_unused_widgets(build_assets(options, problems), kinds, used)
    if not problems:
        files.update(assets.page_image_files(built, options.content_dir))
        with progress.stage("search index"):
            files.update(search_index_stage(options, built, site))  # before the pages: they link it with its hash
        with progress.stage("KaTeX assets"):
            files.update(katex_assets(options, files, built))
        with progress.stage("pages"):
            files.update(pages_stage(options, site, built, assets.asset_urls(files), problems))
        for page in built:  # data files the pages' widgets made (loaded on first interaction)
            files.update(page.facts.files)
    if problems:
        raise BuildFailed(problems)

    with progress.stage("write"):
        write(options, files, built, problems)
    return BuildResult(
        pages=len(built),
        formulas=sum(len(p.facts.formulas) for p in built),
        formulas_rendered=n_fresh,
        seconds=time.perf_counter() - started,
        out_dir=options.out_dir,
        files=files,
        warnings=problems.warnings,
    )


# ------------------------------------------------------------------------------------------ load


def load(options: BuildOptions, problems: Problems) -> SiteSource:
    """content/site.yml, glossary.yml and every page with its front matter (builder/content.py), cached by those files
    and the code that reads them."""
    key = cachestore.digest(
        "load",
        str(options.root),
        str(options.content_dir),
        cachestore.tree_digest(
            [
                Path(__file__).with_name("content.py"),
                Path(__file__).with_name("errors.py"),
                Path(__file__).with_name("model.py"),
                Path(__file__).with_name("source_text.py"),
                Path(__file__).with_name("strict_yaml.py"),
            ]
        ),
        # every file load_site reads: the pages, site.yml and glossary.yml (its terms go to the search index)
        cachestore.tree_digest(
            sorted(options.content_dir.glob("*.md"))
            + [options.content_dir / "site.yml", options.content_dir / "glossary.yml"]
        ),
        # every *.md name, also of what tree_digest cannot hash (a folder, a broken link)
        *sorted(p.name for p in options.content_dir.glob("*.md")),
    )
    before = len(problems)
    with cachestore.open_cache(options.cache_dir) as store:
        site = cachestore.cached(
            store,
            key,
            lambda: load_site(options.content_dir, options.root, problems),
            keep=lambda _: len(problems) == before,
        )
    try:
        course = load_course(options.content_dir, options.root)  # its widgets, plugins, packages, data sources
    except CourseError as exc:
        problems.items.append(exc.problem)
        return site
    for source, exc in fetch_missing(course.data_sources):  # before any page is parsed (builder/data_sources.py)
        where = exc.file or _project_path(options, options.content_dir / "site.yml")
        problems.add(Code.DATA, where, None, f"data source {source.name}: {str(exc).removeprefix(f'{where}: ')}")
    return site


def _project_path(options: BuildOptions, path: Path) -> str:
    try:
        return str(path.resolve().relative_to(options.root.resolve()))
    except ValueError:
        return str(path)


# ------------------------------------------------------------------------------------------ the body stages


def markdown_parser(options: BuildOptions) -> MarkdownIt:
    # The glossary's problems are reported by the load stage; here it is only read.
    glossary = load_glossary(options.content_dir, options.root, Problems())
    course = load_course(options.content_dir, options.root)
    return create_markdown(
        content_dir=options.content_dir,
        prepare_widget=partial(prepare_widget, build=options, course=course),
        render_widget=render_widget,
        render_cell=render_cell,
        render_exercise=render_exercise,
        quote_widget=quote_widget,
        glossary=glossary,
        cell_widgets=course.cell_widgets,
        plugins=course.markdown_plugins,
    )


def body_stages(
    md: MarkdownIt, site: SiteSource, sources: list[SourcePage], options: BuildOptions
) -> tuple[list[Page], int]:
    """Stages 2–5 for some pages: (the pages with HTML and facts, each with its own problems; formulas typeset)."""
    strings = pages.ui_strings(options, site, Problems())  # the theme's words (reported by the pages stage)
    with progress.stage("parse"):
        parsed = [parse(md, source, site) for source in sources]  # parse all
    for page in parsed:  # read when the bodies are rendered (exercises write some of the theme's words)
        page.context.strings = strings
    with progress.stage("python runtime"):
        needs_python = any(page.context.cells or page.context.exercises for page in parsed)
        env = cell_environment(options) if needs_python else None
    # run cells (in Pyodide under Node when it is there: the reader's own runtime), pages side by side
    with progress.stage("run cells"):
        run_cells_of_pages([page.context for page in parsed], options.cache_dir, env, jobs=options.jobs)
    # verify exercises: each solution passes its checks, each starter fails one (the same runtime)
    with progress.stage("verify exercises"):
        verify_exercises_of_pages([page.context for page in parsed], options.cache_dir, env)
    with progress.stage("typeset math"):
        fresh = typeset_math(parsed, options)  # typeset math
    with progress.stage("render bodies"):
        for page in parsed:  # render bodies
            render_body(md, page)
    return parsed, fresh


def cell_environment(options: BuildOptions) -> CellEnvironment:
    """What build-time cells run with: the reader's own runtime (builder/runtime/) when Node and Pyodide are
    there, else a CPython child process; and the course's browser packages."""
    course = load_course(options.content_dir, options.root)
    runtime = None
    if shutil.which("node") and (pyodide_source(options.root, options.pyodide_dir) / "pyodide.js").is_file():
        runtime = python_runtime(
            cache_dir=options.cache_dir or options.root / ".cache",
            root=options.root,
            pyodide_dir=options.pyodide_dir,
            browser_packages=course.browser_packages,
            package_files=course.browser_package_files(options),
        )
    return CellEnvironment(packages=course.browser_packages, runtime=runtime)


def parse(md: MarkdownIt, source: SourcePage, site: SiteSource) -> Page:
    """Markdown → tokens, and the page's facts (headings, links, formulas, cells, widgets' data, …)."""
    context = ParseContext(source.rel, source.body_line, Problems(), site.planned_slugs)
    tokens = md.parse(source.body, context.env())
    return Page(source, context.facts, tokens, context)


def typeset_math(built: list[Page], options: BuildOptions) -> int:
    """Every formula of these pages typeset once by KaTeX (builder/katex/); returns how many were typeset anew."""
    formulas = {f for p in built for f, _ in p.facts.formulas}
    cache = katex.MathCache(options.cache_dir / "katex.sqlite" if options.cache_dir else None)
    try:
        html, errors, fresh = katex.render_all(formulas, cache, options.root)
    finally:
        cache.close()
    for page in built:
        page.context.math_html = html
        for formula, line in page.facts.formulas:
            if formula in errors:
                tex = formula[0] if len(formula[0]) < 120 else formula[0][:117] + "…"
                page.context.problems.add(
                    Code.MATH,
                    page.source.rel,
                    page.source.body_line + line + 1,
                    f"KaTeX cannot typeset `{tex}`: {errors[formula]}",
                )
    return fresh


def render_body(md: MarkdownIt, page: Page) -> None:
    """Tokens → HTML, plus what later stages would otherwise recompute from every page's HTML on every build
    (its reading time and search sections), so they are cached with the body."""
    context = page.context
    page.html = md.renderer.render(page.tokens, md.options, context.env())
    page.facts.reading_minutes = pages.body_reading_minutes(page.html)
    if page.source.kind != "index":  # the index page is not searched
        math_html = context.math_html
        formulas_html = dict.fromkeys(math_html[f] for f, _ in page.facts.formulas if f in math_html)
        page.facts.search_sections = search_index.page_search_sections(page.source.title, page.html, formulas_html)
    page.html = share_svg_paths(page.html)  # after the search text: it matches each formula's own HTML


# ------------------------------------------------------------------------------------------ site-wide stages


def build_assets(options: BuildOptions, problems: Problems) -> dict[str, bytes]:
    """Theme CSS/JS bundles, the course's widget scripts and sheets, KaTeX's files and the runtime script:
    re-built when the theme, the build code, the course's code or the installed front-end packages
    (package-lock.json) change."""
    root = options.root
    course = load_course(options.content_dir, root)
    key = cachestore.digest(
        "assets",
        f"runtime={options.python_runtime} pyodide={options.pyodide_dir}",
        cachestore.tree_digest(
            [
                options.theme_dir,
                Path(__file__).parent,
                *course.code_paths(),
                root / "package-lock.json",
                root / "node_modules" / "katex" / "package.json",
            ]
        ),
    )
    try:
        with cachestore.open_cache(options.cache_dir) as store:
            return cachestore.cached(store, key, lambda: assets.build_assets(options, course))
    except AssetError as exc:
        problems.add(Code.ASSET, exc.path, None, str(exc))
        return {}


def search_index_stage(options: BuildOptions, built: list[Page], site: SiteSource) -> dict[str, bytes]:
    """assets/search-index.js from every page's search sections (computed with its body) and the glossary."""
    with cachestore.open_cache(options.cache_dir) as store:
        return cachestore.cached(
            store,
            cachestore.digest("search", page_cache.pages_key(built), repr(site.glossary)),
            lambda: search_index.search_index_files(built, site.glossary),
        )


def katex_assets(options: BuildOptions, files: dict[str, bytes], built: list[Page]) -> dict[str, bytes]:
    """KaTeX's stylesheet and fonts cut down to what the site's formulas use."""
    katex_files = {name: data for name, data in files.items() if name.startswith("assets/katex/")}
    return katex.site_katex_assets_cached(
        katex_files, (f for p in built for f, _ in p.facts.formulas), options.cache_dir, options.root
    )


def pages_stage(
    options: BuildOptions, site: SiteSource, built: list[Page], asset_urls: dict[str, str], problems: Problems
) -> dict[str, bytes]:
    """Complete HTML pages (Jinja2 templates around the bodies), each cached by its whole template context."""
    with cachestore.open_cache(options.cache_dir) as store:
        stylesheets = load_course(options.content_dir, options.root).stylesheets
        return pages.render_pages(site, built, options, problems, asset_urls, store=store, stylesheets=stylesheets)


def write(options: BuildOptions, files: dict[str, bytes], built: list[Page], problems: Problems) -> None:
    """Everything into a fresh folder next to `out_dir`, swapped into place (builder/output.py)."""
    try:
        course = load_course(options.content_dir, options.root)
        output.write_site(files, options.out_dir, assets.output_writers(options, built, course))
    except AssetError as exc:
        problems.add(Code.ASSET, exc.path, None, str(exc))
        raise BuildFailed(problems) from exc
    except output.OutputRefused as exc:
        problems.add(Code.OUTPUT, str(options.out_dir), None, f"will not write the site here: {exc}")
        raise BuildFailed(problems) from exc
    except OSError as exc:  # a full disk, no permission: output.write_site has removed its temporary folder
        problems.add(Code.OUTPUT, str(options.out_dir), None, f"cannot write the site: {exc.strerror or exc}")
        raise BuildFailed(problems) from exc


__all__ = ["build_site", "body_stages", "markdown_parser", "parse", "render_body", "typeset_math"]
