"""builder/katex/fonts.py: which KaTeX font files a page's formulas make the browser download (so the page can
preload exactly those). The browser itself is the judge in tests/e2e/test_layout_shift.py; here the CSS
semantics (cascade, inheritance, combinators, font matching) are checked on small stylesheets, and the
build's output on a small site."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from builder.katex import font_rules, fonts, katex_css
from builder.katex.engines import render_formula
from tests.conftest import ROOT, build

# A stylesheet shaped like katex.css, small enough to reason about by hand.
CSS = """
@font-face{font-family:F_Main;font-style:normal;font-weight:400;src:url(fonts/Main-Regular.woff2) format("woff2")}
@font-face{font-family:F_Main;font-style:normal;font-weight:700;src:url(fonts/Main-Bold.woff2) format("woff2")}
@font-face{font-family:F_Main;font-style:italic;font-weight:400;src:url(fonts/Main-Italic.woff2) format("woff2")}
@font-face{font-family:F_Main;font-style:italic;font-weight:700;src:url(fonts/Main-BoldItalic.woff2) format("woff2")}
@font-face{font-family:F_Math;font-style:italic;font-weight:400;src:url(fonts/Math-Italic.woff2) format("woff2")}
@font-face{font-family:F_Size1;font-style:normal;font-weight:400;src:url(fonts/Size1.woff2) format("woff2")}
@font-face{font-family:F_Size4;font-style:normal;font-weight:400;src:url(fonts/Size4.woff2) format("woff2")}
.katex{font:normal 1.21em F_Main,Times New Roman,serif;line-height:1.2}
.katex .base{position:relative}
.katex .textbf{font-weight:700}
.katex .textit{font-style:italic}
.katex .mathnormal{font-family:F_Math;font-style:italic}
.katex .mathrm{font-style:normal}
.katex .delimsizing.size1{font-family:F_Size1}
.katex .delimsizing.mult .delim-size4>span{font-family:F_Size4}
"""


def files(html: str, css: str = CSS) -> list[str]:
    usage = fonts.FontUsage(font_rules.parse_font_rules(css))
    return sorted(face.file_name for face in usage.formula_faces(html))


def formula(visual: str) -> str:
    """A formula as KaTeX writes it: a MathML copy (never drawn with a KaTeX font), then the visual part."""
    return (
        '<span class="katex"><span class="katex-mathml"><math><mi>ignored</mi></math></span>'
        f'<span class="katex-html" aria-hidden="true">{visual}</span></span>'
    )


def test_text_takes_the_font_of_its_element_and_inherits_the_rest():
    assert files(formula('<span class="base"><span class="mord">2</span></span>')) == ["Main-Regular.woff2"]
    assert files(formula('<span class="mord mathnormal">x</span>')) == ["Math-Italic.woff2"]
    # weight from an ancestor, style from the element itself: bold italic
    assert files(formula('<span class="mord textbf"><span class="mord textit">ab</span></span>')) == [
        "Main-BoldItalic.woff2"
    ]


def test_the_cascade_orders_by_specificity_then_stylesheet_order():
    # .mathnormal sets italic, the later .mathrm (same specificity) sets normal on the same element; F_Math has
    # no normal face, so font matching still picks its italic one
    assert files(formula('<span class="mord mathnormal mathrm">x</span>')) == ["Math-Italic.woff2"]
    css = CSS + ".katex .mathrm{font-family:F_Main}"  # now later and equally specific: F_Main wins
    assert files(formula('<span class="mord mathnormal mathrm">x</span>'), css) == ["Main-Regular.woff2"]
    css = (
        ".katex .delimsizing.size1{font-family:F_Main}"
        + CSS.replace(".katex .delimsizing.size1{font-family:F_Size1}", "")
        + ".katex .size1{font-family:F_Size1}"
    )  # later but less specific: the two-class rule wins
    assert files(formula('<span class="delimsizing size1">(</span>'), css) == ["Main-Regular.woff2"]


def test_compound_and_child_selectors_match_only_what_they_say():
    assert files(formula('<span class="delimsizing size1">(</span>')) == ["Size1.woff2"]
    assert files(formula('<span class="sizing size1">(</span>')) == ["Main-Regular.woff2"]  # not .delimsizing
    mult = (
        '<span class="delimsizing mult"><span class="vlist"><span class="delim-size4"><span>⎛</span></span></span>'
        "</span>"
    )
    assert files(formula(mult)) == ["Size4.woff2"]
    grandchild = mult.replace("<span>⎛</span>", "<span><span>⎛</span></span>")  # `>` is a child, not any descendant
    assert files(formula(grandchild)) == ["Size4.woff2"]  # the inner span inherits F_Size4 from its parent
    no_mult = mult.replace("delimsizing mult", "delimsizing")
    assert files(formula(no_mult)) == ["Main-Regular.woff2"]


def test_only_the_visual_part_with_text_needs_fonts():
    assert files(formula('<span class="strut" style="height:1em"></span><svg><path d="M0 0"></path></svg>')) == []
    assert files('<span class="katex"><span class="katex-mathml"><math><mi>x</mi></math></span></span>') == []


def test_css_font_matching_picks_style_first_then_the_nearest_weight():
    faces = font_rules.parse_font_rules(CSS).faces
    main = [f for f in faces if f.family == "F_Main"]
    math = [f for f in faces if f.family == "F_Math"]
    assert font_rules.match_face(main, 700, "italic").file_name == "Main-BoldItalic.woff2"
    assert font_rules.match_face(main, 600, "normal").file_name == "Main-Bold.woff2"  # > 500: heavier first
    assert font_rules.match_face(main, 500, "normal").file_name == "Main-Regular.woff2"  # 400–500: then lighter
    assert font_rules.match_face(main, 300, "oblique").file_name == "Main-Italic.woff2"  # oblique → italic
    assert font_rules.match_face(math, 700, "normal").file_name == "Math-Italic.woff2"  # the only face
    assert font_rules.match_face([], 400, "normal") is None


def test_the_shipped_katex_stylesheet_is_understood():
    rules = font_rules.parse_font_rules(katex_css(ROOT))
    assert len(rules.faces) == 20
    dist = ROOT / "node_modules/katex/dist"
    assert all((dist / face.url).is_file() for face in rules.faces)
    usage = fonts.FontUsage(rules)

    def used(tex: str, display: bool = False) -> list[str]:
        return sorted(face.file_name for face in usage.formula_faces(render_formula(tex, display)))

    assert used(r"\mathbb{R}^{n}") == ["KaTeX_AMS-Regular.woff2", "KaTeX_Math-Italic.woff2"]
    assert used(r"\boldsymbol{\alpha}") == ["KaTeX_Math-BoldItalic.woff2"]
    assert used(r"\textbf{\textit{ab}}") == ["KaTeX_Main-BoldItalic.woff2"]


def test_stylesheet_features_it_cannot_evaluate_are_an_error_not_a_guess():
    with pytest.raises(font_rules.FontRulesError):
        font_rules.parse_font_rules(CSS + '.katex [dir="rtl"]{font-family:F_Main}')
    with pytest.raises(font_rules.FontRulesError):
        font_rules.parse_font_rules(CSS + "@media print{.katex{font-family:F_Main}}")
    with pytest.raises(font_rules.FontRulesError):
        font_rules.parse_font_rules("@font-face{font-family:X;src:url(x.woff2);unicode-range:U+0-7F}")


def test_formulas_hidden_when_the_page_loads_are_left_out():
    a, b, c, d, e = (
        formula('<span class="mord">1</span>'),
        formula('<span class="delimsizing size1">(</span>'),
        formula('<span class="mord textbf">c</span>'),
        formula('<span class="mord mathnormal">d</span>'),
        formula('<span class="mord textit">e</span>'),
    )
    body = (
        f"<p>{a}</p><details><summary>看 {b}</summary><p>{c}</p></details>"
        f'<details open><summary>开</summary><p>{d}</p></details><div class="x" hidden><p>{e}</p></div>'
    )
    # the closed <details>' body and the [hidden] element are not drawn; its <summary> and an open one are
    assert page_files(body, [a, b, c, d, e]) == ["Main-Regular.woff2", "Math-Italic.woff2", "Size1.woff2"]
    # a formula shown anywhere counts; one the body does not contain is not drawn at all
    assert page_files(body + f"<p>{c}</p>", [c]) == ["Main-Bold.woff2"]
    assert page_files("<p>没有公式</p>", [a]) == []
    # "hidden" as text or inside an attribute value hides nothing
    assert page_files(f'<p title="a hidden b">hidden {e}</p>', [e]) == ["Main-Italic.woff2"]


def page_files(body: str, formulas_html: list[str]) -> list[str]:
    return sorted(face.file_name for face in fonts.page_faces(body, formulas_html, CSS))


def test_font_urls_are_resolved_like_the_browser_resolves_them_in_the_stylesheet():
    one = formula('<span class="mord">1</span>')
    assert fonts.page_font_urls(one, [one], CSS, "assets/katex/katex.min.css?v=1") == [
        "assets/katex/fonts/Main-Regular.woff2"
    ]
    assert fonts.page_font_urls(one, [one], CSS, "../assets/katex/katex.min.css?v=1") == [
        "../assets/katex/fonts/Main-Regular.woff2"
    ]
    assert fonts.resolve_relative("a/b.css", "https://cdn.invalid/x.woff2") == "https://cdn.invalid/x.woff2"


@pytest.mark.parametrize("display", [False, True])
def test_the_shortcut_for_plain_formulas_agrees_with_walking_every_element(display):
    usage = fonts.FontUsage(font_rules.parse_font_rules(katex_css(ROOT)))
    course = [
        line
        for md in sorted((ROOT / "content").glob("*.md"))
        for line in re.findall(r"\$([^$\n]+)\$", md.read_text(encoding="utf-8"))
    ]
    variety = [
        r"\mathbf{x + \frac{1}{2}}",
        r"\textbf{a \textit{b} c}",
        r"\boldsymbol{\frac{a}{b}}",
        r"\sqrt[3]{x^2}",
        r"\overbrace{a+b}^{n}",
        r"\hat{x}\vec{y}",
        r"\operatorname{softmax}(x)",
        r"\text{中文 \textsf{s}}",
        r"\left( \begin{matrix} a \\ b \\ c \\ d \end{matrix} \right)",
        r"\Bigg( \sum_i \int_0^1",
    ]
    shortcut = 0
    for tex in course + variety:
        try:
            html = render_formula(tex, display)
        except Exception:  # not every $…$ in the Markdown is a formula (code, prices)
            continue
        start = html.index('<span class="katex-html"')
        fast = usage._faces_from_leaves(html, start)
        if fast is not None:
            shortcut += 1
            assert fast == usage._faces_by_walking(html, start), tex
    assert shortcut > len(course) // 2  # the shortcut is the common case


PRELOAD_SCRIPT_RE = re.compile(r"<script>\(function\(\)\{var cors=.*?(\[.*?\])\.forEach", re.S)


def test_each_page_preloads_its_fonts_before_the_stylesheets(make_content, tmp_path):
    make_content("with-math.md", "---\ntitle: 有公式\nkind: explainer\n---\n分数 $\\mathbb{R}^n$ 与 $$\\sum_i x_i$$\n")
    make_content("no-math.md", "---\ntitle: 无公式\nkind: explainer\n---\n这一页没有公式。\n")
    out = tmp_path / "site"
    build(make_content.dir, out, cache_dir=tmp_path / "cache")

    html = (out / "with-math.html").read_text(encoding="utf-8")
    match = PRELOAD_SCRIPT_RE.search(html)
    assert match, "no font preloads"
    urls = json.loads(match.group(1))
    assert [Path(u).name for u in urls] == [
        "KaTeX_AMS-Regular.woff2",
        "KaTeX_Main-Regular.woff2",
        "KaTeX_Math-Italic.woff2",
        "KaTeX_Size2-Regular.woff2",
    ]
    assert all((out / u).is_file() for u in urls)
    assert match.start() < html.index('rel="stylesheet"')  # a script after a stylesheet would wait for it

    for name in ("no-math.html", "index.html"):
        assert "KaTeX_" not in (out / name).read_text(encoding="utf-8").split("</head>")[0]
