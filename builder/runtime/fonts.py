"""The fonts matplotlib draws with in the browser and in the build's cells, added to its wheel (distribution.py).

Chinese: Noto Sans SC (SIL OFL) from the pinned npm package `@fontsource/noto-sans-sc` (builder/runtime/
manifest.json, `cjk_font`: its simplified-Chinese file, fetched once per machine by builder/downloads.py) cut to
GB 2312's level-1 hanzi (the 3,755 most common characters: titles and labels) and CJK and full-width
punctuation, as OpenType: the same bytes on every machine, whatever fonts it has installed. `fontlist.json` is
patched to list exactly the fonts the wheel ships, so matplotlib reads it instead of scanning (seconds in wasm).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from .. import progress
from ..downloads import Pinned, member
from .files import write_atomically
from .verify import RuntimeAssetError, sha256_bytes

CJK_FONT_FAMILY = "Noto Sans CJK SC"  # the family cell_runtime.py asks for
CJK_FONT_FILE = "matplotlib/mpl-data/fonts/ttf/NotoSansSC-Regular-subset.otf"
FONTLIST = "matplotlib/fontlist.json"
MPL_DATA = "matplotlib/mpl-data/"

# matplotlib's own DejaVu Sans (regular, bold, oblique, bold oblique: what text and mathtext draw with; Sans Mono
# for monospace text and mathtext's \mathtt; Sans Display for mathtext's large operators), cut to the scripts
# and symbols a plot of this course can show — Latin (with Latin-1 and Extended-A/B), combining accents (mathtext's
# \hat, \tilde…), Greek, Cyrillic, punctuation, super- and subscripts, letter-like symbols, arrows, mathematical
# operators, the bracket pieces of tall delimiters (Misc. Technical), geometric shapes, angle brackets and long
# arrows (Misc. Math A, Supplemental Arrows-A) and n-ary operators — without TrueType hinting (the Agg renderer
# forces FreeType's auto-hinter: rcParams text.hinting = force_autohint) and with the legacy `kern` table kept
# (FreeType's kerning, which matplotlib uses, reads only that one). Left out: IPA, Vietnamese, box drawing,
# dingbats and the like. 3.1 MB of fonts become 1.0 MB (shipped, zstd: 1.41 → 0.49 MB). Checked with matplotlib 3.8.4 on
# labels, numbers, Greek, arrows and operators at 8–14 pt: the regular face (every label unless a cell asks for
# another) draws pixel for pixel the same; bold and oblique lines differ in a few antialiasing pixels now and then
# (≤ 350 px of a 6-inch line at 14 pt). A character outside these ranges falls back to the CJK font, then to the
# missing-glyph box.
DEJAVU_SUBSET = "matplotlib/mpl-data/fonts/ttf/DejaVuSans*.ttf"
DEJAVU_RANGES = (
    (0x20, 0x24F),
    (0x300, 0x36F),
    (0x370, 0x3FF),
    (0x400, 0x4FF),
    (0x2000, 0x214F),
    (0x2190, 0x23FF),
    (0x25A0, 0x25FF),
    (0x27C0, 0x27FF),
    (0x2A00, 0x2AFF),
    (0xFB00, 0xFB06),
    (0xFFFD, 0xFFFD),
)


def gb2312_level1() -> str:
    """GB 2312's level-1 hanzi (rows 16–55), in code order (decoded by Python's own codec: no data file)."""
    chars = []
    for hi in range(0xB0, 0xD8):
        for lo in range(0xA1, 0xFF):
            try:
                chars.append(bytes([hi, lo]).decode("gb2312"))
            except UnicodeDecodeError:
                pass
    return "".join(chars)


def cjk_font_characters() -> str:
    punct = "".join(chr(c) for c in range(0x3000, 0x3040)) + "".join(chr(c) for c in range(0xFF01, 0xFF5F))
    return "".join(sorted(set(gb2312_level1() + punct)))


def cjk_font(cache_root: Path, spec: dict) -> bytes:
    """The subset CJK font (OpenType, deterministic), made once into the cache from the pinned npm file."""
    import fontTools

    pinned = Pinned(spec["registry"], spec["requirement"], spec["sha256"], spec.get("size", 0))
    source = member(pinned, spec["file"], spec["file_sha256"])
    chars = cjk_font_characters()
    key = sha256_bytes(json.dumps([fontTools.version, spec["file_sha256"], chars]).encode())[:16]
    out = cache_root / "fonts" / f"cjk-{key}.otf"
    if not out.is_file():
        with progress.step(f"cutting the CJK font for matplotlib to {len(chars)} characters"):
            out.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(out, _subset_cjk(source, chars))
    return out.read_bytes()


def _subset_cjk(source: Path, chars: str) -> bytes:
    from fontTools import subset
    from fontTools.ttLib import TTFont

    font = TTFont(str(source), recalcTimestamp=False)
    font.flavor = None  # woff2 in, plain OpenType out (FreeType in matplotlib reads it without brotli)
    options = subset.Options()
    options.layout_features = []  # matplotlib's Agg renderer lays out glyph by glyph: no GSUB/GPOS needed
    options.hinting = False  # matplotlib turns FreeType's hinting to its own (auto) anyway
    options.name_IDs = ["*"]  # keep the licence and the names
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in chars])
    subsetter.subset(font)
    buf = io.BytesIO()
    font.save(buf)
    return buf.getvalue()


def dejavu_subset(data: bytes) -> bytes:
    """One of matplotlib's DejaVu Sans files cut to DEJAVU_RANGES, without hinting (deterministic)."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    font = TTFont(io.BytesIO(data), recalcTimestamp=False)
    options = subset.Options()
    options.hinting = False
    options.name_IDs = ["*"]  # the family name matplotlib lists it by, and the licence
    options.layout_features = ["*"]  # kerning and the rest, as shipped
    options.legacy_kern = True  # the `kern` table: FreeType's kerning
    options.glyph_names = True
    options.notdef_outline = True
    options.drop_tables += ["FFTM"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[c for lo, hi in DEJAVU_RANGES for c in range(lo, hi + 1)])
    subsetter.subset(font)
    out = io.BytesIO()
    font.save(out)
    return out.getvalue()


def _font_manager_version(font_manager_py: bytes) -> int:
    m = re.search(rb"^\s*__version__\s*=\s*(\d+)", font_manager_py, re.M)
    if not m:
        raise RuntimeAssetError("matplotlib/font_manager.py: no FontManager.__version__ found")
    return int(m.group(1))


def _patched_fontlist(data: bytes, kept: set[str], version: int) -> bytes:
    """Pyodide's fontlist.json (made on its build machine: it lists that machine's system fonts too, and
    carries a `_version` this matplotlib rejects) → only the fonts this pack ships, plus the CJK font, under
    the FontManager version of the shipped font_manager.py: matplotlib then reads it instead of scanning its
    fonts (seconds in wasm) on the first import."""
    fl = json.loads(data)
    fl["_version"] = version
    fl["ttflist"] = [e for e in fl["ttflist"] if MPL_DATA + e["fname"] in kept]
    fl["afmlist"] = [e for e in fl["afmlist"] if MPL_DATA + e["fname"] in kept]
    fl["ttflist"].append(
        {
            "fname": CJK_FONT_FILE[len(MPL_DATA) :],
            "name": CJK_FONT_FAMILY,
            "style": "normal",
            "variant": "normal",
            "weight": 400,
            "stretch": "normal",
            "size": "scalable",
            "__class__": "FontEntry",
        }
    )
    return json.dumps(fl, indent=0, sort_keys=True).encode()


def with_fonts(files: list[tuple[str, bytes]], cjk: bytes) -> list[tuple[str, bytes]]:
    """matplotlib's wheel files → DejaVu cut to DEJAVU_RANGES, the CJK font added, fontlist.json patched."""
    files = [(n, dejavu_subset(d) if _matches(n, DEJAVU_SUBSET) else d) for n, d in files]
    files.append((CJK_FONT_FILE, cjk))
    kept = {n for n, _ in files}
    version = _font_manager_version(dict(files)["matplotlib/font_manager.py"])
    return [(n, _patched_fontlist(d, kept, version) if n == FONTLIST else d) for n, d in files]


def _matches(name: str, glob: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(name, glob)
