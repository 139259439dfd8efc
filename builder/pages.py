"""Stage: pages — Jinja2 templates turn rendered bodies into complete HTML files.

All links between pages are relative file names (`qkv-explained.html`), so the site works under any
GitHub Pages sub-path and straight from disk.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jinja2
import yaml

from . import cache as cachestore
from . import katex, strict_yaml
from .errors import Code, Problems
from .markup_policy import in_script
from .model import BuildOptions, Page, SiteSource

CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
LATIN_WORD_RE = re.compile(r"[A-Za-z]+")
TAG_RE = re.compile(r"<[^>]+>")
CSP_PLACEHOLDER = "\ue000csp\ue000"
INLINE_SCRIPT_RE = re.compile(r"<script>(.*?)</script>", re.S)  # the templates' own inline scripts (no attributes)
CSP = (
    "default-src 'self'; script-src 'self' blob: 'wasm-unsafe-eval' {hashes}; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self' blob: data:; worker-src 'self' blob:; "
    "object-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'"
)
"""The Content-Security-Policy of every page: only the site's own files ('self'); for the Python runtime, blob:
scripts and workers (its files, verified against their sha256, run from blob: URLs) and WebAssembly; and the
templates' inline scripts by their sha256 (no 'unsafe-inline' script). Inline styles stay allowed: KaTeX's layout
is `style=""` attributes, and fetches from CSS are held by img-src/font-src."""


def with_csp(html: str) -> str:
    """Fill the template's CSP placeholder, hashing every inline script the template wrote (the page body, put in
    later, has none: raw HTML cannot contain scripts, builder/markdown/raw_html.py, and data blocks are JSON)."""
    hashes = sorted(
        {
            "'sha256-" + base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode() + "'"
            for code in INLINE_SCRIPT_RE.findall(html)
        }
    )
    return html.replace(CSP_PLACEHOLDER, CSP.format(hashes=" ".join(hashes)).replace("  ", " "), 1)


@dataclass(frozen=True)
class NavItem:
    slug: str
    title: str
    kind: str
    module: int | None
    summary: str | None
    url: str | None  # None for a planned page (即将推出)
    minutes: int | None = None
    tags: tuple[str, ...] = ()
    order: int | None = None
    number_label: str = ""  # "模块 05" for a page of a numbered kind (PageKind.label)

    @property
    def planned(self) -> bool:
        return self.url is None


def reading_minutes(text: str) -> int:
    """Reading time for Chinese prose: ~350 CJK characters or ~200 Latin words a minute."""
    cjk = len(CJK_RE.findall(text))
    words = len(LATIN_WORD_RE.findall(text))
    return max(1, round(cjk / 350 + words / 200))


def body_reading_minutes(body_html: str) -> int:
    return reading_minutes(TAG_RE.sub(" ", body_html))


def page_minutes(page: Page) -> int:
    if "minutes" in page.source.meta:
        return page.source.meta["minutes"]
    if page.facts.reading_minutes is not None:
        return page.facts.reading_minutes
    return body_reading_minutes(page.body_html)


def _number_label(site: SiteSource, kind: str, number: int | None) -> str:
    declared = site.kind(kind)
    if declared is None or not declared.numbered or number is None:
        return ""
    return f"{declared.label} {number:02d}" if declared.label else f"{number:02d}"


def nav_items(site: SiteSource, pages: list[Page]) -> dict[str, NavItem]:
    items: dict[str, NavItem] = {}
    for page in pages:
        m = page.source.meta
        items[page.source.slug] = NavItem(
            page.source.slug,
            m["title"],
            m["kind"],
            m.get("module"),
            m.get("summary"),
            page.source.url,
            page_minutes(page),
            tuple(m.get("tags", [])),
            m.get("order"),
            _number_label(site, m["kind"], m.get("module")),
        )
    for plan in site.planned:
        items[plan.slug] = NavItem(
            plan.slug,
            plan.title,
            plan.kind,
            plan.module,
            plan.summary,
            None,
            number_label=_number_label(site, plan.kind, plan.module),
        )
    return items


@dataclass(frozen=True)
class OutlineSection:
    """One kind's pages on the index, in course order."""

    kind: str
    title: str
    lead: str | None
    numbered: bool
    items: tuple[NavItem, ...]


def course_outline(site: SiteSource, items: dict[str, NavItem]) -> list[OutlineSection]:
    """The index's sections, one per declared kind that has pages (written or planned), in declaration order: a
    numbered kind's pages by number, the others by `order`, then title; planned pages after written ones."""
    sections = []
    for kind in site.kinds:
        mine = [i for i in items.values() if i.kind == kind.name]
        if kind.numbered:
            mine.sort(key=lambda i: (i.module if i.module is not None else 1 << 30, i.title))
        else:
            mine.sort(key=lambda i: (i.planned, i.order if i.order is not None else 1 << 30, i.title))
        if mine:
            sections.append(OutlineSection(kind.name, kind.title, kind.lead, kind.numbered, tuple(mine)))
    return sections


def course_entries(outline: list[OutlineSection], pages: list[Page]) -> list[dict[str, Any]]:
    """Written pages in course order (the index's sections, top to bottom) with each page's quiz and exercise ids."""
    quizzes = {p.source.slug: list(p.facts.quiz_ids) for p in pages}
    exercises = {p.source.slug: list(p.facts.exercise_ids) for p in pages}
    return [
        {
            "slug": i.slug,
            "url": i.url,
            "title": i.title,
            "quizzes": quizzes.get(i.slug, []),
            "exercises": exercises.get(i.slug, []),
        }
        for section in outline
        for i in section.items
        if not i.planned
    ]


def course_data_json(entries: list[dict[str, Any]]) -> str:
    """The course for progress tracking (theme/js/site/progress.js), safe inside <script>.

    Only the index needs the whole course (cards, 继续学习); any other page gets just its own entry,
    so a page's size and cache key do not grow with the number of pages in the course."""
    return in_script(json.dumps({"v": 1, "pages": entries}, ensure_ascii=False))


_environments: dict[tuple[str, str], jinja2.Environment] = {}  # (templates dir, their digest) → environment


def make_environment(options: BuildOptions, templates_digest: str | None = None) -> jinja2.Environment:
    """The Jinja environment for the theme's templates; with `templates_digest` (the hash of every template
    file) it is kept and reused while the templates are unchanged, so they are compiled once per process."""
    folder = options.theme_dir / "templates"
    key = (str(folder), templates_digest) if templates_digest else None
    if key in _environments:
        return _environments[key]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # keyed by the templates' digest instead of checking every file's mtime per render
    )
    if key is not None:
        if len(_environments) > 8:
            _environments.clear()
        _environments[key] = env
    return env


def _site_yml(site: SiteSource) -> str:
    path = site.content_dir / "site.yml"
    try:
        return str(path.resolve().relative_to(site.root.resolve()))
    except ValueError:
        return str(path)


def ui_strings(options: BuildOptions, site: SiteSource, problems: Problems) -> dict[str, str]:
    """The theme's words (theme/strings.yml) with the site's replacements (site.yml `strings:`)."""
    path = options.theme_dir / "strings.yml"
    try:
        strings = strict_yaml.load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        problems.add(Code.TEMPLATE, str(path), None, f"the theme's strings cannot be read: {exc}")
        return {}
    for name, text in site.strings.items():
        if name not in strings:
            known = ", ".join(sorted(strings))
            problems.add(
                Code.SITE_CONFIG, _site_yml(site), None, f"strings: the theme has no string '{name}' (it has: {known})"
            )
        else:
            strings[name] = text
    return {k: str(v) for k, v in strings.items()}


def toc_of(page: Page) -> list[dict[str, Any]]:
    return [{"level": h.level, "id": h.id, "text": h.text} for h in page.facts.headings if 2 <= h.level <= 3]


# Every page links the search index with its content hash, and the index changes with any text edit. Pages are
# rendered (and cached) with this stand-in for that URL, substituted when the bytes are produced, so an edit
# re-renders only the pages whose own context changed. U+FDD0 is a Unicode noncharacter: never in content.
SEARCH_INDEX_ASSET = "search-index.js"
SEARCH_INDEX_PLACEHOLDER = "\ufdd0search-index-url\ufdd0"
# Likewise the page body: a page's template output is rendered and cached around this stand-in, and the body
# (already in memory, cached with the page) is put in when the bytes are produced, so the template cache holds
# only each page's chrome, not a second copy of every body. This works because the templates print `content`
# verbatim (`{{ content|safe }}`); the "<" makes an escaped or otherwise transformed `content` miss the stand-in,
# and such a page is then rendered with its real body instead.
BODY_PLACEHOLDER = "\ufdd0page-body<\ufdd0"


def render_pages(
    site: SiteSource,
    pages: list[Page],
    options: BuildOptions,
    problems: Problems,
    asset_urls: dict[str, str],
    store: cachestore.BuildCache | None = None,
    stylesheets: Callable[[set[str]], list[str]] = lambda kinds: [],
) -> dict[str, bytes]:
    """{"<slug>.html": bytes} for every page. `stylesheets(widget kinds)`: the kinds whose own style sheets a
    page with those widgets links, in order (`Course.stylesheets`).

    With `store`, each page's HTML is cached under the hash of everything its template context holds: the
    page's body cache key (body HTML and facts: toc, features…), its own/prev/next navigation
    items, the site-wide data (outline, course data, asset URLs but the search index's) and the templates.
    """
    templates_digest = cachestore.tree_digest([options.theme_dir / "templates"])
    env = make_environment(options, templates_digest)
    items = nav_items(site, pages)
    outline = course_outline(site, items)
    ui = ui_strings(options, site, problems)
    entries = course_entries(outline, pages)
    full_course_data = course_data_json(entries)
    entry_of = {e["slug"]: e for e in entries}
    search_url = asset_urls.get(SEARCH_INDEX_ASSET)
    context_assets = dict(asset_urls)
    if search_url is not None:
        context_assets[SEARCH_INDEX_ASSET] = SEARCH_INDEX_PLACEHOLDER
    shared_key = cachestore.digest(
        "html",
        templates_digest,
        site.series,
        site.title,
        json.dumps(context_assets, sort_keys=True),
        json.dumps(ui, sort_keys=True, ensure_ascii=False),
    )
    is_index = {page.source.slug: page.source.meta["kind"] == "index" for page in pages}

    def course_data_of(page: Page) -> str:
        slug = page.source.slug
        if is_index[slug]:
            return full_course_data
        return course_data_json([entry_of[slug]] if slug in entry_of else [])

    def html_key(page: Page) -> str | None:
        if not page.key:
            return None
        slug, meta = page.source.slug, page.source.meta
        # Only the index shows the whole outline; other pages depend on their own and prev/next items.
        site_wide = repr(outline) if is_index[slug] else ""
        return cachestore.digest(
            shared_key,
            page.key,
            page.source.rel,  # in the template context (page.source); the body's key names the file only
            repr(items[slug]),
            course_data_of(page),
            site_wide,
            repr(items.get(meta.get("prev", ""))),
            repr(items.get(meta.get("next", ""))),
        )

    keys = [html_key(page) for page in pages]
    cached = store.get_many([k for k in keys if k is not None]) if store is not None else {}
    fresh: dict[str, str] = {}
    files: dict[str, bytes] = {}
    preload_fonts = font_preloads_for(options, [p for p, k in zip(pages, keys) if cached.get(k) is None], asset_urls)
    for page, key in zip(pages, keys):
        html = cached.get(key) if key is not None else None
        if html is None:
            preloads = preload_fonts(page)
            html = render_page(
                env,
                site,
                page,
                items,
                outline,
                course_data_of(page),
                context_assets,
                problems,
                ui=ui,
                content=BODY_PLACEHOLDER,
                font_preloads=preloads,
                stylesheets=stylesheets,
            )
            if html is not None and BODY_PLACEHOLDER not in html:
                html = render_page(
                    env,
                    site,
                    page,
                    items,
                    outline,
                    course_data_of(page),
                    context_assets,
                    problems,
                    font_preloads=preloads,
                    stylesheets=stylesheets,
                )
            if html is None:
                continue
            if key is not None:
                fresh[key] = html
        if search_url is not None:
            html = html.replace(SEARCH_INDEX_PLACEHOLDER, search_url)
        files[page.source.url] = html.replace(BODY_PLACEHOLDER, page.body_html).encode("utf-8")
    if store is not None and fresh:
        store.put_many(fresh)
    files[NOT_FOUND_PAGE] = render_not_found(env, site, entries, asset_urls.get("favicon.svg", ""), problems, ui)
    return files


NOT_FOUND_PAGE = "404.html"


def render_not_found(
    env: jinja2.Environment,
    site: SiteSource,
    entries: list[dict[str, Any]],
    favicon: str,
    problems: Problems,
    ui: dict[str, str],
) -> bytes:
    """404.html for GitHub Pages: self-contained (inline style), links to the index, the search and every page;
    its script rewrites the links from the site's root, since the page is served at any depth."""
    try:
        html = with_csp(
            env.get_template("404.html").render(
                site={"series": site.series, "title": site.title},
                pages=[e for e in entries if e.get("url")],
                favicon=favicon,
                ui=ui,
                csp=CSP_PLACEHOLDER,
            )
        )
    except jinja2.TemplateError as exc:
        problems.add(Code.TEMPLATE, "theme/templates/404.html", getattr(exc, "lineno", None), str(exc))
        return b""
    return html.encode("utf-8")


def font_preloads_for(
    options: BuildOptions, pages: list[Page], asset_urls: dict[str, str]
) -> Callable[[Page], list[str]]:
    """page → URLs of the KaTeX fonts its formulas draw (builder/katex/fonts.py), for the pages about to be rendered.
    A function of the body, the formulas' HTML, KaTeX's stylesheet and builder/, all in the page's cache key."""
    formulas = {f for page in pages for f, _ in page.facts.formulas}
    if not formulas or "katex.css" not in asset_urls:
        return lambda page: []
    cache = katex.MathCache(options.cache_dir / "katex.sqlite" if options.cache_dir else None)
    try:
        html, _, _ = katex.render_all(
            formulas, cache, options.root
        )  # typeset already: from this process's memo or the cache
    finally:
        cache.close()
    katex_css = katex.katex_css(options.root)

    def preloads(page: Page) -> list[str]:
        formulas_html = [html[f] for f, _ in page.facts.formulas if f in html]
        return katex.page_font_urls(page.body_html, formulas_html, katex_css, asset_urls["katex.css"])

    return preloads


def widget_kinds(features: set[str]) -> set[str]:
    """The widget kinds a page has, from its features (`widget-<kind>`, `lazy-widget-<kind>`)."""
    return {f.split("widget-", 1)[1] for f in features if f.startswith(("widget-", "lazy-widget-"))}


def render_page(
    env: jinja2.Environment,
    site: SiteSource,
    page: Page,
    items: dict[str, NavItem],
    outline: list[OutlineSection],
    course_data: str,
    asset_urls: dict[str, str],
    problems: Problems,
    content: str | None = None,
    ui: dict[str, str] | None = None,
    font_preloads: list[str] | None = None,
    stylesheets: Callable[[set[str]], list[str]] = lambda kinds: [],
) -> str | None:
    """The page's complete HTML; with `content`, that text stands in for the page body. `font_preloads`:
    URLs of the KaTeX font files the page's formulas use (builder/katex/fonts.py)."""
    meta = page.source.meta
    template_name = "index.html" if meta["kind"] == "index" else "page.html"
    context = {
        "site": {"series": site.series, "title": site.title},
        "page": {
            "slug": page.source.slug,
            "url": page.source.url,
            "title": meta["title"],
            "kind": meta["kind"],
            "summary": meta.get("summary"),
            "item": items[page.source.slug],
            "features": sorted(page.features),
            "widget_sheets": stylesheets(widget_kinds(page.features)),
            "source": page.source.rel,
        },
        "content": page.body_html if content is None else content,
        "toc": toc_of(page),
        "prev": items.get(meta.get("prev", "")),
        "next": items.get(meta.get("next", "")),
        "outline": outline,
        "ui": ui or {},
        "assets": asset_urls,
        "course_data": course_data,
        # the course's exercises (the index shows how many are passed from its first paint: no line appears later)
        "exercise_total": sum(
            len(entry.get("exercises", [])) for entry in json.loads(course_data or "{}").get("pages", [])
        ),
        "font_preloads": font_preloads or [],
        "csp": CSP_PLACEHOLDER,
    }
    try:
        return with_csp(env.get_template(template_name).render(**context))
    except jinja2.TemplateError as exc:
        lineno = getattr(exc, "lineno", None)
        problems.add(
            Code.TEMPLATE,
            f"theme/templates/{getattr(exc, 'name', None) or template_name}",
            lineno,
            f"while rendering {page.source.rel}: {exc}",
        )
        return None
