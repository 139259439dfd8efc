"""KaTeX for the site: every formula typeset once (typeset.py, with engines.py and compact.py), KaTeX's
stylesheet and fonts cut down to what the site's formulas use (site_assets.py, with css.py and subset.py), and
the font files each page's formulas draw, for it to preload (fonts.py, with font_rules.py)."""

from .engines import KATEX_VERSION, MathEngine, default_engine
from .fonts import page_font_urls
from .site_assets import katex_css, katex_files, site_katex_assets, site_katex_assets_cached
from .typeset import Formula, MathCache, render_all

__all__ = [
    "KATEX_VERSION",
    "Formula",
    "MathCache",
    "MathEngine",
    "default_engine",
    "katex_css",
    "katex_files",
    "page_font_urls",
    "render_all",
    "site_katex_assets",
    "site_katex_assets_cached",
]
