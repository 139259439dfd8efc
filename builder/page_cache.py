"""The page cache and the process pool that wrap the body stages (parse → run cells → typeset math → render,
builder/pipeline.py `body_stages`): a page whose inputs are unchanged is restored, not rebuilt.

A page's body (Markdown → HTML, with math, figures, widgets, code cells, quizzes) depends only on
* the page file itself (front matter + body, its file name and first body line),
* the build code and everything the plugins read: builder/, the course package and its browser packages,
  pyproject.toml (pinned library versions), every non-Markdown file of content/ (site.yml's planned
  pages, figures), the KaTeX version;
so its cache key is the hash of exactly those. A hit restores the HTML and the page's facts (PageFacts), so the
link checker, navigation and templates still see the whole site. Pages with problems are never cached, so their
errors are reported again on every build until fixed.

Misses are rendered in a pool of worker processes (spawned, not forked: V8 must not be forked once started)
when there are enough of them to pay for the workers' start-up (~0.5 s: imports + one parser + one KaTeX
engine per worker). Results are collected in page order, so the output does not depend on how pages were
split between workers.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from . import cache as cachestore
from .course import load_course
from .errors import Problem, Problems
from .katex import KATEX_VERSION
from .model import BuildOptions, Page, PageFacts, SiteSource, SourcePage
from .numerics import pin_blas_threads

BUILDER_DIR = Path(__file__).resolve().parent
POOL_MIN_PAGES = 48  # below this, starting workers costs more than it saves

BodyStages = Callable[[Any, SiteSource, list[SourcePage], BuildOptions], tuple[list[Page], int]]
MakeParser = Callable[[BuildOptions], Any]  # the site's markdown-it parser for these options
Rendered = tuple[str, PageFacts, list[Problem]]  # (body HTML, facts, problems) of one page


def jobs_for(options: BuildOptions) -> int:
    return max(1, options.jobs if options.jobs is not None else (os.cpu_count() or 1))


def body_fingerprint(options: BuildOptions) -> str:
    """Hash of every input a page body depends on besides the page file itself."""
    root = options.root
    return cachestore.digest(
        f"katex={KATEX_VERSION} runtime={options.python_runtime}",  # the engine's code: BUILDER_DIR below
        cachestore.tree_digest(
            [
                BUILDER_DIR,
                *load_course(options.content_dir, root).code_paths(),
                root / "pyproject.toml",
                options.theme_dir / "strings.yml",  # the words exercises write (builder/exercises/render.py)
            ]
        ),
        # every file but the pages, named within the content folder (wherever that lies, whatever its name)
        cachestore.tree_digest(
            sorted(p for p in options.content_dir.iterdir() if p.suffix != ".md" and p.name != "__pycache__"),
            skip=lambda p: p.suffix == ".md",
        )
        if options.content_dir.is_dir()
        else "",
    )


def page_key(fingerprint: str, source: SourcePage) -> str:
    """The page's file by its name and bytes, not by where the project lies: a moved or copied checkout keeps its
    pages (its messages, which name the path, are never cached: a page with problems is built again)."""
    meta = json.dumps(source.meta, sort_keys=True, ensure_ascii=False, default=str)
    return cachestore.digest("page", fingerprint, source.path.name, str(source.body_line), meta, source.body)


def pages_key(pages: list[Page]) -> str:
    """Hash of every page's body key: the input of stages that depend only on the pages (e.g. the search index)."""
    return cachestore.digest(*(p.key for p in pages))


def page_bodies(
    site: SiteSource,
    options: BuildOptions,
    problems: Problems,
    stages: BodyStages,
    make_parser: MakeParser,
    pool: ProcessPoolExecutor | None = None,
) -> tuple[list[Page], int]:
    """Every page with its body HTML and facts, from the cache or from `stages` (in `pool`'s workers, or new ones,
    when enough pages miss). Returns (pages in site order, formulas typeset in this build)."""
    fingerprint = body_fingerprint(options)
    keys = [page_key(fingerprint, s) for s in site.pages]
    with cachestore.open_cache(options.cache_dir) as store:
        hits: dict[str, Any] = store.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in hits]
        sources = [site.pages[i] for i in todo]
        jobs = jobs_for(options)
        if len(todo) >= POOL_MIN_PAGES and jobs > 1:
            rendered, n_fresh = _render_in_pool(options, site, sources, jobs, stages, make_parser, pool)
        else:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
            rendered, n_fresh = _render_here(options, site, sources, stages, make_parser)
        fresh_entries = {}
        for i, (html, facts, page_problems) in zip(todo, rendered):
            problems.items.extend(page_problems)
            hits[keys[i]] = (html, facts)
            if not page_problems:
                fresh_entries[keys[i]] = (html, facts)
        store.put_many(fresh_entries)
        if not problems:
            store.put(_last_fingerprint_key(options), fingerprint)
    # a copy of the facts: later stages must never change what the cache holds
    built = [
        Page(source, copy.deepcopy(hits[key][1]), html=hits[key][0], key=key) for source, key in zip(site.pages, keys)
    ]
    return built, n_fresh


def _render_here(
    options: BuildOptions, site: SiteSource, sources: list[SourcePage], stages: BodyStages, make_parser: MakeParser
) -> tuple[list[Rendered], int]:
    if not sources:
        return [], 0
    built, fresh = stages(make_parser(options), site, sources, options)
    return [(page.body_html, page.facts, list(page.context.problems.items)) for page in built], fresh


# ------------------------------------------------------------------------------------------ the pool

_worker_parser: Any = None  # this worker's parser, made once (one parser and one KaTeX engine per worker)


def _init_worker(options: BuildOptions, make_parser: MakeParser) -> None:
    global _worker_parser
    pin_blas_threads()  # the same numbers as the main process's (builder/numerics.py)
    _worker_parser = make_parser(options)


def _render_chunk(site: SiteSource, sources: list[SourcePage], options: BuildOptions, stages: BodyStages):
    return _render_here(options, site, sources, stages, lambda _: _worker_parser)


def start_pool(options: BuildOptions, jobs: int, make_parser: MakeParser) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        max_workers=jobs, mp_context=get_context("spawn"), initializer=_init_worker, initargs=(options, make_parser)
    )


def _render_in_pool(
    options: BuildOptions,
    site: SiteSource,
    sources: list[SourcePage],
    jobs: int,
    stages: BodyStages,
    make_parser: MakeParser,
    pool: ProcessPoolExecutor | None,
) -> tuple[list[Rendered], int]:
    light_site = dataclasses.replace(site, pages=[])  # workers need planned pages, not every body
    n_chunks = min(len(sources), jobs * 4)
    size = -(-len(sources) // n_chunks)
    chunks = [sources[i : i + size] for i in range(0, len(sources), size)]
    running = pool or start_pool(options, jobs, make_parser)
    try:
        futures = [running.submit(_render_chunk, light_site, chunk, options, stages) for chunk in chunks]
        results = [future.result() for future in futures]
    finally:
        close_pool(running)
    return [item for rendered, _ in results for item in rendered], sum(fresh for _, fresh in results)


POOL_EXIT_S = 10.0


def close_pool(pool: ProcessPoolExecutor, grace_s: float = POOL_EXIT_S) -> None:
    """Shut the pool down without waiting forever for a worker that does not exit: once every result is in, the
    workers are asked to leave; any still there after `grace_s` is killed.  (`shutdown(wait=True)` joins each
    worker with no time limit, and a clean-clone test run once hung 900 s there: a worker that had sent all its
    results never exited.)  The executor's own thread reaps them (it joins every worker), so that is what is waited
    for; this thread only signals."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # CPython's ProcessPoolExecutor: pid → Process
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    if manager is None:
        return
    manager.join(grace_s)
    if manager.is_alive():
        for process in processes:
            process.kill()  # one already gone is skipped (ProcessLookupError is ignored)
        manager.join(5)


def _last_fingerprint_key(options: BuildOptions) -> str:
    return cachestore.digest("last body fingerprint", str(options.content_dir.resolve()))


def early_pool(options: BuildOptions, make_parser: MakeParser) -> ProcessPoolExecutor | None:
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
    pool = start_pool(options, jobs, make_parser)
    for _ in range(jobs):  # spawning happens on first submit: start every worker now
        pool.submit(int)
    return pool
