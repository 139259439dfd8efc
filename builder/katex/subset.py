"""KaTeX's fonts cut down to the characters the site draws (`subset_font`, `subset_fonts_cached`), for the
site's KaTeX files (site_assets.py)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from pathlib import Path

import fontTools

from builder import cache as cachestore

from .fonts import font_files_drawn

# The fonts: KaTeX's woff2 files hold every glyph KaTeX can draw (Main-Regular alone is 26 KB); a course draws a
# few dozen characters. Each font the pruned stylesheet names is cut down to the characters the site's formulas
# contain and AUTOHINTER_REFERENCE (with everything else of the font kept: outlines, metrics, hinting, kerning,
# OpenType layout, names), so every formula looks exactly as with the full font (fontTools, with brotli for woff2).

KATEX_FONTS_DIR = "assets/katex/fonts/"
# Kept in each subset: Chromium on Linux draws with FreeType's auto-hinter (or skrifa's copy of it), which sizes
# a script's blue zones and stem widths from fixed reference letters of that script ("blue strings" and standard
# characters, FreeType's src/autofit/afblue.dat); a subset without them would draw the very same glyphs a little
# differently. Latin's are always kept (digits, symbols and Latin letters use them); another script's when the
# site draws one of its letters.
AUTOHINTER_REFERENCE = {
    "latin": ("THEZOCQSHEZLOCUSfijkdbhuvxzoescnrxzoescpqgjyoO0", None),
    "greek": ("ΓΒΕΖΘΟΩΒΔΖΞΘΟβθδζλξαειοπστωβγημρφχψοΟ", re.compile("[\u0370-\u03ff\u1f00-\u1fff]")),
    "cyrillic": ("БВЕПЗОСЭБВЕШЗОСЭхпншезосруфоО", re.compile("[\u0400-\u052f]")),
}


def autohinter_reference(characters: set[str]) -> set[str]:
    """The reference letters of every script `characters` has letters of (Latin always)."""
    text = "".join(characters)
    return {
        c for chars, script in AUTOHINTER_REFERENCE.values() if script is None or script.search(text) for c in chars
    }


def subset_font(woff2: bytes, characters: str) -> bytes:
    """`woff2` with only the glyphs of `characters` (and what the font's layout tables reach from them);
    tables, names, hinting and metrics are kept, the timestamp is not touched (same bytes for the same input)."""
    from fontTools import subset  # imported on a cache miss only: it takes ≈ 0.2 s
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.name_languages = ["*"]
    options.name_legacy = True
    options.notdef_glyph = True
    options.notdef_outline = True
    options.glyph_names = True
    options.hinting = True
    options.legacy_kern = True
    options.drop_tables = []
    options.recalc_bounds = False
    options.recalc_timestamp = False
    options.prune_unicode_ranges = False
    font = TTFont(io.BytesIO(woff2), recalcBBoxes=False, recalcTimestamp=False)  # glyph boxes as drawn by KaTeX
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=characters)
    subsetter.subset(font)
    out = io.BytesIO()
    font.flavor = "woff2"
    font.save(out)  # tables in tag order: the same bytes whatever the hash seed
    return out.getvalue()


def subset_fonts_cached(
    fonts: dict[str, bytes], characters: str, css: str, formulas_html: Iterable[str], cache_dir: Path | None
) -> dict[str, bytes]:
    """The fonts the formulas draw with, each subset to `characters` (the others are never requested: left as
    they are), cached by (characters, fonts): a page edit seldom adds a character."""
    key = cachestore.digest(
        "katex-font-subset",
        cachestore.code_digest(__file__, Path(__file__).with_name("fonts.py")),  # what is subset, and how
        fontTools.version,
        characters,
        *(name.encode() + b"\0" + data for name, data in sorted(fonts.items())),
    )

    def compute() -> dict[str, bytes]:
        # which fonts are drawn is worked out only here: it costs more than the cache look-up
        drawn = font_files_drawn(css, formulas_html)
        return {
            name: subset_font(data, characters)
            for name, data in fonts.items()
            if drawn is None or name[len(KATEX_FONTS_DIR) :] in drawn
        }

    with cachestore.open_cache(cache_dir) as store:
        return cachestore.cached(store, key, compute)
