"""Stage — pages: Jinja2 templates turn rendered bodies into complete HTML files.

All links between pages are relative file names (`qkv-explained.html`), so the site works under any
GitHub Pages sub-path and straight from disk.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jinja2

from .content import SiteSource
from .errors import Code, Problems

if TYPE_CHECKING:
    from .site import BuildOptions, Page

CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
LATIN_WORD_RE = re.compile(r"[A-Za-z]+")
TAG_RE = re.compile(r"<[^>]+>")


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

    @property
    def planned(self) -> bool:
        return self.url is None

    @property
    def module_label(self) -> str:
        return f"模块 {self.module:02d}" if self.module is not None else ""


def reading_minutes(text: str) -> int:
    """Reading time for Chinese prose: ~350 CJK characters or ~200 Latin words a minute."""
    cjk = len(CJK_RE.findall(text))
    words = len(LATIN_WORD_RE.findall(text))
    return max(1, round(cjk / 350 + words / 200))


def page_minutes(page: "Page") -> int:
    if "minutes" in page.source.meta:
        return page.source.meta["minutes"]
    return reading_minutes(TAG_RE.sub(" ", page.body_html))


def nav_items(site: SiteSource, pages: list["Page"]) -> dict[str, NavItem]:
    items: dict[str, NavItem] = {}
    for page in pages:
        m = page.source.meta
        items[page.source.slug] = NavItem(page.source.slug, m["title"], m["kind"], m.get("module"), m.get("summary"),
                                          page.source.url, page_minutes(page), tuple(m.get("tags", [])))
    for plan in site.planned:
        items[plan.slug] = NavItem(plan.slug, plan.title, plan.kind, plan.module, plan.summary, None)
    return items


def course_outline(items: dict[str, NavItem]) -> dict[str, list[NavItem]]:
    modules = sorted((i for i in items.values() if i.kind == "module"), key=lambda i: (i.module or 0, i.title))
    explainers = [i for i in items.values() if i.kind == "explainer"]
    explainers.sort(key=lambda i: (i.planned, i.title))
    return {"modules": modules, "explainers": explainers}


def course_data_json(outline: dict[str, list[NavItem]], pages: list["Page"]) -> str:
    """The course for progress tracking (theme/js/site/progress.js): written pages in course order
    (modules by number, then explainers) with each page's quiz ids. Safe inside <script>."""
    quizzes = {p.source.slug: list(p.env.get("quiz_ids", [])) for p in pages}
    order = [{"slug": i.slug, "url": i.url, "title": i.title, "quizzes": quizzes.get(i.slug, [])}
             for i in outline["modules"] + outline["explainers"] if not i.planned]
    return json.dumps({"v": 1, "pages": order}, ensure_ascii=False).replace("</", "<\\/")


def make_environment(options: "BuildOptions") -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(options.theme_dir / "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env


def toc_of(page: "Page") -> list[dict[str, Any]]:
    return [{"level": h["level"], "id": h["id"], "text": h["text"]}
            for h in page.env.get("headings", []) if 2 <= h["level"] <= 3]


def render_pages(site: SiteSource, pages: list["Page"], options: "BuildOptions", problems: Problems,
                 asset_urls: dict[str, str]) -> dict[str, bytes]:
    env = make_environment(options)
    items = nav_items(site, pages)
    outline = course_outline(items)
    course_data = course_data_json(outline, pages)
    files: dict[str, bytes] = {}
    for page in pages:
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
                "source": page.source.rel,
            },
            "content": page.body_html,
            "toc": toc_of(page),
            "prev": items.get(meta.get("prev", "")),
            "next": items.get(meta.get("next", "")),
            "outline": outline,
            "extra_head": page.env.get("extra_head", []),
            "assets": asset_urls,
            "course_data": course_data,
        }
        try:
            html = env.get_template(template_name).render(**context)
        except jinja2.TemplateError as exc:
            lineno = getattr(exc, "lineno", None)
            problems.add(Code.TEMPLATE, f"theme/templates/{getattr(exc, 'name', None) or template_name}", lineno,
                         f"while rendering {page.source.rel}: {exc}")
            continue
        files[page.source.url] = html.encode("utf-8")
    return files
