"""TEMPORARY shim: KaTeX's fonts are now builder/katex/fonts.py (issue 13). This re-exports what the rest of
builder/ imports from here; it goes once they import builder.katex."""
from .katex.fonts import page_font_urls

__all__ = ["page_font_urls"]
