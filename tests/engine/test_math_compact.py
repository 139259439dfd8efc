"""What the site ships of KaTeX: its output made smaller (compact_katex_html) without changing what a browser
builds from it, and its stylesheet pruned to what the site's formulas can match (prune_katex_css)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from builder.katex import site_assets
from builder.katex.compact import SEMANTIC_CLASSES, STYLE_CLASSES, compact_katex_html, style_class_rules
from builder.katex.css import _split_selectors, classes_in, css_blocks, prune_katex_css
from builder.katex.engines import PykatexEngine, default_engine
from builder.katex.subset import AUTOHINTER_REFERENCE, autohinter_reference, subset_font
from builder.katex.typeset import MathCache, render_all
from tests.conftest import ROOT
from tests.engine.test_math_engines import SYNTHETIC, course_formulas

KATEX_DIST_CSS = ROOT / "node_modules" / "katex" / "dist" / "katex.min.css"


class _Tree(HTMLParser):
    """Elements as (tag, attributes, children/text) with what compact_katex_html may change normalised away:
    xmlns attributes, <semantics>/<annotation> wrappers, and style attributes parsed into (property, value)
    pairs with numbers as floats, without a negative height (invalid CSS, which a browser drops as it parses)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root: list = []
        self.stack = [self.root]
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if self.skip or tag == "annotation":
            self.skip += 1
            return
        if tag == "semantics":
            return
        normal = []
        attrs = _shared_classes_as_style(attrs)
        for name, value in attrs:
            if name == "xmlns":
                continue
            if name == "style":
                value = tuple(
                    (
                        p.strip(),
                        tuple(
                            float(n) if re.fullmatch(r"-?\d*\.?\d+", n) else n
                            for n in re.split(r"(-?\d*\.?\d+)", v.strip())
                            if n
                        ),
                    )
                    for p, v in (d.split(":", 1) for d in value.split(";") if d.strip())
                    if not (p.strip() == "height" and v.strip().startswith("-"))  # invalid CSS: a browser drops it
                )
                if not value:
                    continue
            normal.append((name, value))
        node = (tag, tuple(normal), [])
        self.stack[-1].append(node)
        self.stack.append(node[2])

    def handle_endtag(self, tag):
        if self.skip:
            self.skip -= 1
            return
        if tag != "semantics":
            self.stack.pop()

    def handle_data(self, data):
        if not self.skip:
            self.stack[-1].append(data)


def _shared_classes_as_style(attrs: list) -> list:
    """A shared style class (compact.STYLE_CLASSES, `k<i>`) read back as the style attribute it stands for, and
    the classes no stylesheet selects (compact.SEMANTIC_CLASSES) left out on either side."""
    out, style = [], None
    for name, value in attrs:
        if name == "class":
            names = [c for c in value.split() if c not in SEMANTIC_CLASSES]
            shared = [c for c in names if re.fullmatch(r"k\d+", c)]
            assert len(shared) <= 1, value
            if shared:
                style = STYLE_CLASSES[int(shared[0][1:])]
                names.remove(shared[0])
            if names:
                out.append((name, " ".join(names)))
        else:
            out.append((name, value))
    return out + ([("style", style)] if style else [])


def tree(html: str) -> list:
    parser = _Tree()
    parser.feed(html)
    parser.close()
    return parser.root


@pytest.fixture(scope="module")
def typeset() -> dict[tuple[str, bool], str]:
    """KaTeX's own output for every formula of the course and the synthetic set."""
    formulas = sorted(course_formulas() | set(SYNTHETIC))
    out = default_engine(ROOT).render_many(formulas)
    return {f: html for f, (html, _) in zip(formulas, out) if html is not None}


@pytest.mark.slow
def test_compact_html_builds_the_same_elements_as_katex_output(typeset):
    assert len(typeset) > 40
    for formula, html in typeset.items():
        compact = compact_katex_html(html)
        assert tree(compact) == tree(html), formula


def test_compact_html_drops_namespaces_tex_source_and_style_padding(typeset):
    before = sum(len(h.encode()) for h in typeset.values())
    compacts = [compact_katex_html(h) for h in typeset.values()]
    after = sum(len(h.encode()) for h in compacts)
    joined = "".join(compacts)
    assert "xmlns=" not in joined and "<annotation" not in joined and "<semantics>" not in joined
    assert not re.search(r'style="[^"]*;"', joined)  # no trailing semicolon
    assert not re.search(r'style="[^"]*(?<![\w.])0\.\d', joined)  # no leading zero
    assert joined.count('<span class="katex-html" aria-hidden="true">') == len(compacts)  # what search relies on
    assert after < 0.92 * before, (before, after)


def test_compact_html_drops_katex_negative_heights_and_nothing_else_of_the_style(typeset):
    """KaTeX writes `height:-…` on a vlist whose children all sit below the baseline (`\\left(…\\right)_b`): invalid
    CSS, which the browser drops and the Nu Html Checker reports; compact drops it too, and an emptied style."""
    katex = compact_katex_html(typeset[next(f for f in typeset if re.search(r"height:-", typeset[f]))])
    assert not re.search(r"height:-", katex)
    html = '<span class="vlist" style="height:-0.5136em;"></span><span style="top:-1.7em;height:-0.2em;"></span>'
    assert compact_katex_html(html) == '<span class="vlist"></span><span style="top:-1.7em"></span>'
    assert not re.search(r"(?<![-\w])height:-", "".join(compact_katex_html(h) for h in typeset.values()))


def test_the_shared_style_classes_have_one_rule_each_in_the_site_stylesheet_and_replace_the_styles(typeset):
    rules = style_class_rules()
    assert rules.count("{") == len(STYLE_CLASSES)
    assert ".katex .k1{margin-right:.2778em!important}" in rules  # the thick space, \\; or a relation's gap
    assert ".katex .k7{height:1em!important;vertical-align:-.25em!important}" in rules
    joined = "".join(compact_katex_html(h) for h in typeset.values())
    for style in STYLE_CLASSES:
        assert f'style="{style}"' not in joined
    assert re.search(r'class="mspace k[0-9]+"', joined)
    # the shipped stylesheet (pruned to what the formulas use) has them
    css = site_assets.katex_css(ROOT)
    assert css.endswith(rules) and prune_katex_css(css, classes_in(joined)).count(".katex .k") >= 10


def test_compact_html_is_what_the_math_stage_caches_and_returns(tmp_path):
    formula = (r"\frac{QK^\top}{\sqrt{d_k}}", True)
    cache = MathCache(tmp_path / "katex.sqlite")
    html, errors, fresh = render_all([formula], cache, ROOT, memo={})
    assert not errors and fresh == 1
    raw = PykatexEngine().render_many([formula])[0][0]
    assert html[formula] == compact_katex_html(raw) != raw
    assert cache.get_many([MathCache.key(*formula)]) == {MathCache.key(*formula): html[formula]}


# ------------------------------------------------------------------------------------------- stylesheet


def test_pruning_with_every_class_keeps_the_stylesheet_unchanged():
    css = KATEX_DIST_CSS.read_text(encoding="utf-8")
    every = set(re.findall(r"\.(-?[_a-zA-Z][\w-]*)", css))
    assert prune_katex_css(css, every) == css.strip()


def test_pruning_drops_selectors_that_need_an_unused_class_and_fonts_nobody_names():
    css = (
        "@font-face{font-family:KaTeX_Main;src:url(a.woff2)}@font-face{font-family:KaTeX_Size4;src:url(b.woff2)}"
        '@font-face{font-family:"KaTeX_Script";src:url(c.woff2)}'
        ".katex{font:normal 1.21em KaTeX_Main,serif}"
        ".katex .a.b,.katex .c{color:red}"
        '.katex .x:not(.unused)>span{content:"{}"}'
        ".katex .size4{font-family:KaTeX_Size4}"
        ".katex .script{font-family:KaTeX_Script}"
        "@media screen{.katex .c{margin:0}.katex .zz{margin:1px}}"
        ".katex-display>.katex{display:block}"
    )
    out = prune_katex_css(css, {"katex", "c", "x", "script"})
    assert out == (
        "@font-face{font-family:KaTeX_Main;src:url(a.woff2)}"
        '@font-face{font-family:"KaTeX_Script";src:url(c.woff2)}'
        ".katex{font:normal 1.21em KaTeX_Main,serif}"
        ".katex .c{color:red}"
        '.katex .x:not(.unused)>span{content:"{}"}'
        ".katex .script{font-family:KaTeX_Script}"
        "@media screen{.katex .c{margin:0}}"
    )


def test_pruned_stylesheet_keeps_every_rule_the_course_formulas_can_match(typeset):
    """Each dropped selector names a class absent from every formula; each kept one only present classes."""
    css = KATEX_DIST_CSS.read_text(encoding="utf-8")
    used = set()
    for html in typeset.values():
        used |= classes_in(compact_katex_html(html))
    assert {"katex", "katex-html", "mathnormal", "vlist", "mfrac"} <= used and not SEMANTIC_CLASSES & used
    pruned = prune_katex_css(css, used)
    assert len(pruned) < len(css) / 2
    kept = {s for prelude, _ in css_blocks(pruned) for s in _split_selectors(prelude)}
    for prelude, _ in css_blocks(css):
        if prelude.startswith("@"):
            continue
        for selector in _split_selectors(prelude):
            needs = set(re.findall(r"\.(-?[_a-zA-Z][\w-]*)", re.sub(r":not\([^)]*\)", "", selector)))
            assert (selector in kept) == (needs <= used), selector


# ------------------------------------------------------------------------------------------------ fonts

fontTools = pytest.importorskip("fontTools")
KATEX_FONTS = ROOT / "node_modules" / "katex" / "dist" / "fonts"


def test_subset_font_keeps_the_glyphs_metrics_and_hinting_of_the_characters_asked_for():
    from io import BytesIO

    from fontTools.ttLib import TTFont

    data = (KATEX_FONTS / "KaTeX_Math-Italic.woff2").read_bytes()
    out = subset_font(data, "QKVdk")
    assert out == subset_font(data, "QKVdk")  # deterministic (no timestamp)
    assert len(out) < len(data) / 2
    full, sub = TTFont(BytesIO(data)), TTFont(BytesIO(out))
    assert set(sub.getBestCmap()) == {ord(c) for c in "QKVdk"}
    for char in "QKVdk":
        a, b = full.getBestCmap()[ord(char)], sub.getBestCmap()[ord(char)]
        assert full["hmtx"][a] == sub["hmtx"][b]
        ga, gb = full["glyf"][a], sub["glyf"][b]
        ga.expand(full["glyf"])
        gb.expand(sub["glyf"])
        assert (ga.xMin, ga.yMin, ga.xMax, ga.yMax) == (gb.xMin, gb.yMin, gb.xMax, gb.yMax)
        assert list(ga.coordinates) == list(gb.coordinates) and ga.program.getBytecode() == gb.program.getBytecode()
    for table in ("fpgm", "prep", "cvt ", "gasp"):  # the hinting programs and their data
        assert full.getTableData(table) == sub.getTableData(table), table
    assert (full["hhea"].ascent, full["hhea"].descent, full["head"].unitsPerEm) == (
        sub["hhea"].ascent,
        sub["hhea"].descent,
        sub["head"].unitsPerEm,
    )


def test_autohinter_reference_letters_follow_the_scripts_drawn():
    assert autohinter_reference({"x"}) == set(AUTOHINTER_REFERENCE["latin"][0])
    greek = autohinter_reference({"α", "1"})
    assert set("THEZ0") <= greek and set("ΓΒβθοΟ") <= greek and not greek & set("БВ")


def test_site_fonts_cover_every_formula_character_and_the_autohinter_reference(tmp_path):
    from io import BytesIO

    from fontTools.ttLib import TTFont

    formulas = [(r"\mathrm{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V", True), (r"\sum_j e^{s_j}", False)]
    css = KATEX_DIST_CSS.read_text(encoding="utf-8")
    files = {site_assets.KATEX_CSS_PATH: css.encode()}
    for font in KATEX_FONTS.glob("*.woff2"):
        files[f"assets/katex/fonts/{font.name}"] = font.read_bytes()
    out = site_assets.site_katex_assets(files, formulas, tmp_path, ROOT)
    shipped_css = out[site_assets.KATEX_CSS_PATH].decode()
    named = set(re.findall(r"url\(fonts/([^)]+\.woff2)\)", shipped_css))
    assert {"KaTeX_Main-Regular.woff2", "KaTeX_Math-Italic.woff2", "KaTeX_Size3-Regular.woff2"} <= named
    assert "KaTeX_Fraktur-Regular.woff2" not in named
    html, _, _ = render_all(formulas, MathCache(None), ROOT)
    chars = set().union(*(site_assets.formula_characters(h) for h in html.values()))
    assert not chars & set("ΓΒβγБВ")
    chars |= autohinter_reference(chars)
    assert set("THEZOCQSpqgjy0") <= chars and not chars & set("ΓΒβγБВ")  # Latin reference only
    subset = set()
    for name, data in files.items():
        if not name.endswith(".woff2") or out[name] == data:  # a font no formula draws is never requested: as it is
            continue
        subset.add(name.rsplit("/", 1)[1])
        full, sub = TTFont(BytesIO(data)).getBestCmap(), TTFont(BytesIO(out[name])).getBestCmap()
        assert len(out[name]) < len(data)
        assert set(sub) == {c for c in full if chr(c) in chars}, name
    assert {"KaTeX_Main-Regular.woff2", "KaTeX_Math-Italic.woff2"} <= subset <= named
    assert "KaTeX_Main-Bold.woff2" not in subset  # named by the stylesheet (family KaTeX_Main) but never drawn
    assert out == site_assets.site_katex_assets(files, formulas, tmp_path, ROOT)  # and again, from the cache


def test_site_katex_assets_are_cached_by_the_set_of_formulas(tmp_path, monkeypatch):
    files = {
        site_assets.KATEX_CSS_PATH: KATEX_DIST_CSS.read_bytes(),
        "assets/katex/fonts/KaTeX_Main-Regular.woff2": (KATEX_FONTS / "KaTeX_Main-Regular.woff2").read_bytes(),
    }
    formulas = [(r"x^2 + 1", False), (r"\frac{a}{b}", True)]
    first = site_assets.site_katex_assets_cached(files, formulas, tmp_path, ROOT)
    assert first == site_assets.site_katex_assets(files, formulas, tmp_path, ROOT)
    calls = []
    monkeypatch.setattr(site_assets, "site_katex_assets", lambda *a: calls.append(a) or {})
    same_set = list(reversed(formulas)) * 2
    assert site_assets.site_katex_assets_cached(files, same_set, tmp_path, ROOT) == first  # same set
    assert not calls
    site_assets.site_katex_assets_cached(files, formulas + [(r"\sqrt{d_k}", False)], tmp_path, ROOT)
    assert len(calls) == 1  # a new formula: worked out again


def test_the_classes_compact_drops_are_selected_by_no_stylesheet_or_script():
    """SEMANTIC_CLASSES leave the pages because nothing reads them: not KaTeX's stylesheet, not the theme's CSS or
    scripts. A rule or a script that starts to use one must make this fail (and the class stay)."""
    sources = {KATEX_DIST_CSS: KATEX_DIST_CSS.read_text(encoding="utf-8")}
    for pattern in ("theme/css/**/*.css", "theme/js/**/*.js"):
        sources.update({f: f.read_text(encoding="utf-8") for f in ROOT.glob(pattern)})
    for path, text in sources.items():
        named = (
            set(re.findall(r"\.(-?[_a-zA-Z][\w-]*)", text))
            if path.suffix == ".css"
            else set(re.findall(r"[\w-]+", text))
        )
        assert not SEMANTIC_CLASSES & named, (path, SEMANTIC_CLASSES & named)
    html = compact_katex_html(
        '<span class="mord mathnormal" style="margin-right:.2778em">x</span><span class="mbin">+</span>'
    )
    assert html == '<span class="mathnormal k1">x</span><span>+</span>'
