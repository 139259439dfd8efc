"""Stage — assets: the theme's CSS and JavaScript bundles, KaTeX's CSS and fonts, the Python runtime.

Every URL handed to templates carries a short content hash (`site.css?v=1a2b3c4d`) so browsers and
GitHub Pages caches never serve a stale file after a rebuild.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable
from pathlib import Path

from .bundle import BundleError, bundle_front_end
from .course import Course
from .errors import AssetError
from .katex import katex_files
from .model import BuildOptions, Page
from .runtime import completions_script, python_runtime, write_site_runtime


def short_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:10]


# Theme stylesheets only some pages need, with the page feature (PageFacts.features) or page kind that needs each.
OPTIONAL_CSS = {"cells.css": "cells", "index.css": "index", "quiz.css": "quiz", "widgets.css": "widgets"}


def css_bundle_name(needs: Iterable[str]) -> str:
    """The bundle for a page with these features / kind: "site.css", "site-cells-quiz-widgets.css", …"""
    return "-".join(["site", *sorted(set(needs) & set(OPTIONAL_CSS.values()))]) + ".css"


def theme_css(minified: dict[str, str]) -> dict[str, bytes]:
    """One stylesheet per combination of OPTIONAL_CSS (each page links the one for what it has, templates/base.html):
    base.css first, then the theme's other stylesheets in name order, each minified — a page's bundle is the
    full list less the optional sheets it does not need, so the cascade order is the same on every page.
    `minified`: {file name in theme/css: text}."""
    ordered = dict(sorted(minified.items(), key=lambda item: (item[0] != "base.css", item[0])))
    optional = [name for name in ordered if name in OPTIONAL_CSS]
    bundles = {}
    for k in range(len(optional) + 1):
        for chosen in itertools.combinations(optional, k):
            css = "".join(text for name, text in ordered.items() if name not in OPTIONAL_CSS or name in chosen)
            bundles[f"assets/{css_bundle_name(OPTIONAL_CSS[n] for n in chosen)}"] = css.encode("utf-8")
    return bundles


def widget_css_asset(kind: str) -> str:
    """A widget kind's own stylesheet (its folder's style.css) in the site: "widgets-qkv-projection.css" (assets/,
    its URL key); pages link the ones `Course.stylesheets` names."""
    return f"widgets-{kind}.css"


def build_assets(options: BuildOptions, course: Course) -> dict[str, bytes]:
    """Every asset but the Python runtime's large files: the theme's scripts and stylesheets and the course's
    widget kinds' (one esbuild run, builder/bundle.py), KaTeX's files, the theme's static files, the editor's
    completions."""
    theme_sheets = sorted((options.theme_dir / "css").glob("*.css"))
    widget_sheets = {
        name: folder / "style.css" for name, folder in course.widget_folders.items() if (folder / "style.css").is_file()
    }
    try:
        files, minified = bundle_front_end(
            options.root,
            options.theme_dir,
            widgets=course.widget_folders,
            python_runtime=options.python_runtime,
            css_files=theme_sheets + sorted(widget_sheets.values()),
        )
    except BundleError as exc:
        raise AssetError("theme/js", str(exc)) from exc
    files.update(theme_css({path.name: minified[path] for path in theme_sheets}))
    for name, path in widget_sheets.items():
        files[f"assets/{widget_css_asset(name)}"] = minified[path].encode("utf-8")
    files.update(katex_files(options.root))
    static = options.theme_dir / "static"
    for extra in sorted(static.glob("*")) if static.exists() else []:
        if extra.is_file():
            files[f"assets/{extra.name}"] = extra.read_bytes()
    files["assets/numpy-completions.js"] = completions_script(course.browser_packages, options.cache_dir)
    return dict(sorted(files.items()))


def without_unused_widgets(files: dict[str, bytes], kinds: Iterable[str], used: set[str]) -> dict[str, bytes]:
    """`files` less the scripts and stylesheets of the course's widget `kinds` no page of this site shows
    (`used`): a site ships only what its pages can load."""
    unused = set(kinds) - used
    drop = {f"assets/widget-{k}.js" for k in unused} | {f"assets/{widget_css_asset(k)}" for k in unused}
    return {name: data for name, data in files.items() if name not in drop}


def asset_urls(files: dict[str, bytes]) -> dict[str, str]:
    """'site.css' → 'assets/site.css?v=…' for every top-level asset."""
    urls = {}
    for rel, data in files.items():
        if rel.startswith("assets/") and rel.count("/") == 1:
            urls[rel[len("assets/") :]] = f"{rel}?v={short_hash(data)}"
        elif rel == "assets/katex/katex.min.css":
            urls["katex.css"] = f"{rel}?v={short_hash(data)}"
        elif rel == "assets/python/python-runtime.js":
            urls["python-runtime.js"] = f"{rel}?v={short_hash(data)}"
    return urls


def page_image_files(pages: list[Page], content_dir: Path) -> dict[str, bytes]:
    """The local images the pages' Markdown references (builder/markdown/images.py: each by its path within the
    content folder), under their hashed names."""
    return {
        name: (content_dir / source).read_bytes()
        for page in pages
        for name, source in sorted(page.facts.images.items())
    }


def output_writers(options: BuildOptions, pages: list[Page], course: Course) -> list[Callable[[Path], None]]:
    """Large outputs linked straight into the new site folder from the cache (the Python runtime)."""
    if not options.python_runtime or not any("cells" in p.features for p in pages):
        return []

    def write_runtime(out: Path) -> None:
        # python-runtime.js itself is already in the output (build_assets bundled it to hash its URL)
        runtime = python_runtime(
            cache_dir=options.cache_dir or options.root / ".cache",
            root=options.root,
            pyodide_dir=options.pyodide_dir,
            browser_packages=course.browser_packages,
            package_files=course.browser_package_files(options),
        )
        write_site_runtime(out / "assets" / "python", runtime, options.cache_dir or options.root / ".cache")

    return [write_runtime]
