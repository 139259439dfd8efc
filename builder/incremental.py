"""Fast page bodies: a page-level cache plus a process pool for the pages that miss it.

A page's body (Markdown → HTML, with math, figures, widgets, code cells, quizzes) depends only on
* the page file itself (front matter + body, its path and first body line),
* the build code and everything the plugins read: builder/, attention_core/ (widget data, cells),
  pyproject.toml (pinned library versions), every non-Markdown file of content/ (site.yml's planned
  pages, figures), the KaTeX version;
so its cache key is the hash of exactly those. A hit restores the rendered HTML and the facts other stages
need (the page's `env`: headings, anchors, links, formulas, features, extra_head, quiz ids, …), so the link
checker, navigation and templates still see the whole site. Pages with problems are never cached, so their
errors are reported again on every build until fixed.

Misses are rendered in a pool of worker processes (spawned, not forked: V8 must not be forked once
started) when there are enough of them to pay for the workers' start-up (~0.5 s: imports + one parser +
one KaTeX engine per worker). Each worker keeps its formulas in memory, so a formula shared by many
pages is typeset at most once per worker; results are collected in page order, so the output does not
depend on how pages were split between workers.
"""
from __future__ import annotations

import dataclasses
import json
import os
import pickle
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import cache as cachestore
from .content import SiteSource, SourcePage
from .errors import Problem, Problems
from .math import KATEX_VERSION

if TYPE_CHECKING:
    from .site import BuildOptions, Page

BUILDER_DIR = Path(__file__).resolve().parent
POOL_MIN_PAGES = 48  # below this, starting workers costs more than it saves
# env entries that belong to one build run (or are re-created for each page), never cached
TRANSIENT_ENV_KEYS = {"problems", "page", "rel", "line_offset", "planned_slugs", "math_html", "page_key"}


def jobs_for(options: "BuildOptions") -> int:
    return max(1, options.jobs if options.jobs is not None else (os.cpu_count() or 1))


def body_fingerprint(options: "BuildOptions") -> str:
    """Hash of every input a page body depends on besides the page file itself."""
    root = options.root
    return cachestore.digest(
        f"schema={cachestore.SCHEMA} katex={KATEX_VERSION} runtime={options.python_runtime}",
        cachestore.tree_digest([BUILDER_DIR, root / "attention_core", root / "pyproject.toml"]),
        cachestore.tree_digest([options.content_dir], skip=lambda p: p.suffix == ".md"),
    )


def page_key(fingerprint: str, source: SourcePage) -> str:
    meta = json.dumps(source.meta, sort_keys=True, ensure_ascii=False, default=str)
    return cachestore.digest("page", fingerprint, source.rel, str(source.body_line), meta, source.body)


def cacheable_env(env: dict[str, Any]) -> dict[str, Any]:
    """The page facts worth keeping: everything but the transient entries, and only what pickles."""
    kept = {}
    for key, value in env.items():
        if key in TRANSIENT_ENV_KEYS:
            continue
        try:
            pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            continue
        kept[key] = value
    return kept


# ------------------------------------------------------------------------------------------ rendering


def render_sources(md: Any, site: SiteSource, sources: list[SourcePage], cache_dir: Path | None
                   ) -> list[tuple[str, dict[str, Any], list[Problem], int]]:
    """Parse, typeset and render pages in this process: [(body html, cacheable env, problems, fresh formulas)]."""
    from .site import Page, new_env, typeset_math

    pages = []
    for source in sources:
        env = new_env(source, site, Problems())
        pages.append(Page(source, md.parse(source.body, env), env))
    # typeset_math reports each bad formula into the page's own problems
    math_problems = Problems()
    _, fresh = typeset_math(pages, cache_dir, math_problems)
    for problem in math_problems.items:
        next(p for p in pages if p.source.rel == problem.path).env["problems"].items.append(problem)
    out = []
    for i, page in enumerate(pages):
        html = md.renderer.render(page.tokens, md.options, page.env)
        add_derived_facts(page, html)
        out.append((html, cacheable_env(page.env), list(page.env["problems"].items), fresh if i == 0 else 0))
    return out


def add_derived_facts(page: "Page", html: str) -> None:
    """Facts later stages would otherwise recompute from every page's HTML on every build: the search
    index's text sections and the reading time. Computed here, they are cached with the page body."""
    from .pages import READING_MINUTES_ENV_KEY, body_reading_minutes
    from .search_index import SECTIONS_ENV_KEY, page_search_sections

    page.env[READING_MINUTES_ENV_KEY] = body_reading_minutes(html)
    if page.source.kind != "index":  # the index page is not searched
        math_html = page.env.get("math_html", {})
        formulas_html = dict.fromkeys(math_html[f] for f, _ in page.env.get("formulas", []) if f in math_html)
        page.env[SECTIONS_ENV_KEY] = page_search_sections(page.source.title, html, formulas_html)


_worker_md: Any = None


def _init_worker(options: "BuildOptions") -> None:
    global _worker_md
    from .markdown import create_markdown
    from .site import directive_plugins

    _worker_md = create_markdown(content_dir=options.content_dir, extra_plugins=directive_plugins(options))
    _worker_md.options["build_options"] = options


def _render_chunk(site: SiteSource, sources: list[SourcePage], cache_dir: Path | None):
    return render_sources(_worker_md, site, sources, cache_dir)


def start_pool(options: "BuildOptions", jobs: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"), initializer=_init_worker,
                               initargs=(options,))


def render_in_pool(options: "BuildOptions", site: SiteSource, sources: list[SourcePage], jobs: int,
                   pool: ProcessPoolExecutor | None = None):
    light_site = dataclasses.replace(site, pages=[])  # workers need planned pages, not every body
    n_chunks = min(len(sources), jobs * 4)
    size = -(-len(sources) // n_chunks)
    chunks = [sources[i : i + size] for i in range(0, len(sources), size)]
    with pool or start_pool(options, jobs) as running:
        futures = [running.submit(_render_chunk, light_site, chunk, options.cache_dir) for chunk in chunks]
        return [item for future in futures for item in future.result()]


def _last_fingerprint_key(options: "BuildOptions") -> str:
    return cachestore.digest("last body fingerprint", str(options.content_dir.resolve()))


def early_pool(options: "BuildOptions") -> ProcessPoolExecutor | None:
    """Worker processes started before the content is loaded, so their start-up (~0.5 s each: imports, parser,
    V8) overlaps loading — but only when most pages will miss the page cache: the site is large enough for a
    pool and it has never been built with the current build code and non-page inputs (body_fingerprint())."""
    jobs = jobs_for(options)
    if jobs <= 1 or options.cache_dir is None or not options.content_dir.is_dir():
        return None
    with os.scandir(options.content_dir) as entries:
        n_pages = sum(1 for e in entries if e.name.endswith(".md"))
    if n_pages < POOL_MIN_PAGES:
        return None
    with cachestore.open_cache(options.cache_dir) as store:
        if store.get(_last_fingerprint_key(options)) == body_fingerprint(options):
            return None
    pool = start_pool(options, jobs)
    for _ in range(jobs):  # spawning happens on first submit: start every worker now
        pool.submit(int)
    return pool


def render_bodies(site: SiteSource, md: Any, options: "BuildOptions", problems: Problems,
                  pool: ProcessPoolExecutor | None = None) -> tuple[list["Page"], int, int]:
    """Every page with its body HTML and facts, from the cache or freshly rendered.

    `pool`: workers already started (early_pool()); used if enough pages need rendering, shut down in any case.
    Returns (pages in site order, formulas on all pages, formulas typeset in this build).
    """
    from .site import Page, new_env

    fingerprint = body_fingerprint(options)
    keys = [page_key(fingerprint, s) for s in site.pages]
    with cachestore.open_cache(options.cache_dir) as store:
        hits = store.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in hits]
        jobs = jobs_for(options)
        sources = [site.pages[i] for i in todo]
        if len(todo) >= POOL_MIN_PAGES and jobs > 1:
            rendered = render_in_pool(options, site, sources, jobs, pool)
        else:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
            rendered = render_sources(md, site, sources, options.cache_dir)
        fresh_entries = {}
        n_fresh = 0
        for i, (html, facts, page_problems, fresh) in zip(todo, rendered):
            n_fresh += fresh
            problems.items.extend(page_problems)
            hits[keys[i]] = (html, facts)
            if not page_problems:
                fresh_entries[keys[i]] = (html, facts)
        store.put_many(fresh_entries)
        if not problems:
            store.put(_last_fingerprint_key(options), fingerprint)

    pages = []
    for source, key in zip(site.pages, keys):
        html, facts = hits[key]
        env = new_env(source, site, problems)
        env.update(_copy_facts(facts))
        env["page_key"] = key
        pages.append(Page(source, [], env, html))
    return pages, sum(len(p.env.get("formulas", [])) for p in pages), n_fresh


def _copy_facts(facts: dict[str, Any]) -> dict[str, Any]:
    """A page's facts may be mutated by later stages (env.setdefault…); never let that reach the cache."""
    return {k: (set(v) if isinstance(v, set) else list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict)
                else v) for k, v in facts.items()}


# ------------------------------------------------------------------------------- whole-stage caches
# Stages other than page bodies are cached as a whole, keyed by all their inputs: a no-change rebuild
# re-uses them; any change to an input re-runs the stage (they are cheap for the course's size).


def _stage(options: "BuildOptions", name: str, key: str, compute, problems: Problems | None = None):
    """compute() once per distinct `key`; a result produced together with new problems is not kept."""
    full_key = cachestore.digest("stage", name, key)
    with cachestore.open_cache(options.cache_dir) as store:
        value = store.get(full_key)
        if value is not None:
            return value
        before = len(problems) if problems is not None else 0
        value = compute()
        if problems is None or len(problems) == before:
            store.put(full_key, value)
        return value


def load_site_cached(options: "BuildOptions", problems: Problems) -> SiteSource:
    from .content import load_site

    key = cachestore.digest(str(options.root), str(options.content_dir),
                            cachestore.tree_digest([BUILDER_DIR / "content.py", BUILDER_DIR / "errors.py"]),
                            cachestore.tree_digest(sorted(options.content_dir.glob("*.md")) + [options.content_dir / "site.yml"]))
    return _stage(options, "load", key, lambda: load_site(options.content_dir, options.root, problems), problems)


def assets_cached(options: "BuildOptions", build) -> dict[str, bytes]:
    """The theme's CSS/JS bundles, KaTeX files and runtime script: re-built when the theme, the build code,
    attention_core or the installed front-end packages (package-lock.json) change."""
    root = options.root
    key = cachestore.digest(
        f"runtime={options.python_runtime} pyodide={options.pyodide_dir}",
        cachestore.tree_digest([options.theme_dir, BUILDER_DIR, root / "attention_core", root / "package-lock.json",
                                root / "node_modules" / "katex" / "package.json"]))
    return _stage(options, "assets", key, lambda: build(options))


def pages_key(pages: list["Page"]) -> str:
    return cachestore.digest(*(p.env["page_key"] for p in pages))


def by_pages_cached(options: "BuildOptions", name: str, pages: list["Page"], compute, *extra: str,
                    problems: Problems | None = None):
    """A stage whose output depends only on the pages (and the build code) — e.g. the search index."""
    key = cachestore.digest(pages_key(pages), *extra)  # page keys already include body_fingerprint()
    return _stage(options, name, key, compute, problems)


def templates_cached(options: "BuildOptions", site: SiteSource, pages: list["Page"], asset_urls: dict[str, str],
                     problems: Problems) -> dict[str, bytes]:
    """Complete HTML pages; each page's HTML is cached under the hash of its whole template context
    (builder/pages.py), so an edit re-renders only the pages whose context changed."""
    from .pages import render_pages

    with cachestore.open_cache(options.cache_dir) as store:
        return render_pages(site, pages, options, problems, asset_urls, store=store)
