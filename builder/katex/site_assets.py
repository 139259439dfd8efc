"""The site's KaTeX files: KaTeX's stylesheet without the woff/ttf sources and its woff2 fonts (`katex_files`),
and the same as this site needs them (`site_katex_assets`): the stylesheet pruned to the classes of the site's
formulas, each font it still names subset to the characters they draw."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from html import unescape
from pathlib import Path

from builder import cache as cachestore
from builder.errors import AssetError

from .compact import style_class_rules
from .css import classes_in, prune_katex_css
from .engines import KATEX_DIST
from .subset import KATEX_FONTS_DIR, autohinter_reference, subset_fonts_cached
from .typeset import Formula, MathCache, render_all

KATEX_CSS_PATH = "assets/katex/katex.min.css"


def katex_css(root: Path) -> str:
    """KaTeX's stylesheet as the site ships it: its @font-face rules name only the woff2 files (every browser
    we target reads woff2, so the woff/ttf fallbacks are dropped instead of being shipped). The pages stage
    reads it too, to preload each page's fonts (fonts.py). Appended: the rules of compact.py's shared style classes."""
    css_path = root / KATEX_DIST / "katex.min.css"
    if not css_path.exists():
        raise AssetError(str(KATEX_DIST), "KaTeX is not installed: run `npm ci` (or `make site`)")
    css = css_path.read_text(encoding="utf-8")
    # + the rules of the shared style classes compact_katex_html writes (pruning keeps the ones formulas use)
    return re.sub(r',url\(fonts/[^)]+\.(?:woff|ttf)\) format\("(?:woff|truetype)"\)', "", css) + style_class_rules()


def katex_files(root: Path) -> dict[str, bytes]:
    """KaTeX's stylesheet (katex_css) and its woff2 fonts, by their path in the site."""
    files = {KATEX_CSS_PATH: katex_css(root).encode("utf-8")}
    for font in sorted((root / KATEX_DIST / "fonts").glob("*.woff2")):
        files[f"{KATEX_FONTS_DIR}{font.name}"] = font.read_bytes()
    return files


_formula_facts: dict[str, tuple[frozenset[str], frozenset[str]]] = {}  # formula HTML → (classes, characters)
_TAG_RE = re.compile(r"<[^>]*>")
_CSS_CONTENT_RE = re.compile(r"content\s*:\s*\"([^\"]*)\"")


def formula_characters(formula_html: str) -> set[str]:
    """Every character of a formula's text (visual part and MathML)."""
    return set(unescape(_TAG_RE.sub("", formula_html)) if "&" in formula_html else _TAG_RE.sub("", formula_html))


def site_katex_assets(
    katex_files: dict[str, bytes], formulas: Iterable[Formula], cache_dir: Path | None, root: Path
) -> dict[str, bytes]:
    """KaTeX's stylesheet and fonts as this site needs them: the stylesheet pruned to the classes of the site's
    formulas (prune_katex_css), each font subset to their characters (subset_font). The formulas are typeset
    already: their HTML comes from the cache (`root`: the repository, for the engine should one be missing)."""
    cache = MathCache(cache_dir / "katex.sqlite" if cache_dir else None)
    try:
        html, _, _ = render_all(formulas, cache, root)
    finally:
        cache.close()
    used: set[str] = set()
    characters: set[str] = set()
    for formula_html in html.values():
        facts = _formula_facts.get(formula_html)
        if facts is None:
            if len(_formula_facts) > 50_000:
                _formula_facts.clear()
            facts = _formula_facts[formula_html] = (
                frozenset(classes_in(formula_html)),
                frozenset(formula_characters(formula_html)),
            )
        used |= facts[0]
        characters |= facts[1]
    out = dict(katex_files)
    if KATEX_CSS_PATH in katex_files:
        css = prune_katex_css(katex_files[KATEX_CSS_PATH].decode("utf-8"), used)
        out[KATEX_CSS_PATH] = css.encode("utf-8")
        for text in _CSS_CONTENT_RE.findall(css):  # generated content is drawn with the fonts too
            characters |= set(text)
    named = set(re.findall(r"url\(\s*[\"']?fonts/([^\"')?#]+)", out.get(KATEX_CSS_PATH, b"").decode("utf-8")))
    fonts = {
        name: data
        for name, data in katex_files.items()
        if name.startswith(KATEX_FONTS_DIR) and name[len(KATEX_FONTS_DIR) :] in named
    }
    characters |= autohinter_reference(characters)
    out.update(
        subset_fonts_cached(
            fonts, "".join(sorted(characters)), katex_files.get(KATEX_CSS_PATH, b"").decode(), html.values(), cache_dir
        )
    )
    return out


def site_katex_assets_cached(
    katex_files: dict[str, bytes], formulas: Iterable[Formula], cache_dir: Path | None, root: Path
) -> dict[str, bytes]:
    """site_katex_assets(), cached by what it depends on: the set of the site's formulas (most edits change no
    formula), KaTeX's files and the code of this package (the typesetting, pruning and subsetting)."""
    ordered = sorted(set(formulas))
    key = cachestore.digest(
        "site-katex-assets",
        cachestore.tree_digest([Path(__file__).parent]),
        json.dumps(ordered, ensure_ascii=False),
        *(name.encode() + b"\0" + hashlib.sha256(data).digest() for name, data in sorted(katex_files.items())),
    )
    with cachestore.open_cache(cache_dir) as store:
        return cachestore.cached(store, key, lambda: site_katex_assets(katex_files, ordered, cache_dir, root))
