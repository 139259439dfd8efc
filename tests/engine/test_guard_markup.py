"""Issue 34, item 2: one rule for every path by which markup, URLs and CSS reach a page (builder/markup_policy.py).

Inlined SVG figures, SVG images, raw HTML and the Markdown inside callout titles and figure captions are judged
alike: animation elements that can write a `javascript:` link, `url()` to outside the site in presentation
attributes, `style` and `<style>` (CSS escapes decoded first), `image-set()` and the like, a DTD. The course's own
figures still pass and are published byte for byte as before.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT, BuildFailed, build

SITE = "series: 测试系列\ntitle: 测试课程\nkinds:\n  explainer: {title: 讲解}\n"
INDEX = "---\ntitle: 首页\nkind: index\n---\n欢迎。\n"
HEAD = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10">'
HEAD += "<title>图</title><desc>一张图</desc>"

BAD_FIGURES = {
    "set.svg": '<a><set attributeName="href" to="javascript:alert(1)"/><text>x</text></a>',
    "animate.svg": '<animate attributeName="xlink:href" values="javascript:alert(1)"/>',
    "fill.svg": '<rect width="1" height="1" fill="url(http://evil.example/x)"/>',
    "escaped.svg": '<rect width="1" height="1" style="fill: u\\72l(http://evil.example/x)"/>',
    "marker.svg": '<line x2="5" y2="5" marker-end="url(&quot;https://evil.example/m.svg#m&quot;)"/>',
    "style.svg": "<style>rect { fill: url('https://evil.example/x') } @import 'https://evil.example/y.css';</style>",
    "imageset.svg": "<style>rect { fill: red; background: image-set('https://evil.example/x' 1x) }</style>",
    "handler.svg": '<rect width="1" height="1" onclick="alert(1)"/>',
    "foreign.svg": "<foreignObject><div>x</div></foreignObject>",
}

GOOD_FIGURE = (
    HEAD + '<defs><linearGradient id="good-g"><stop offset="0" stop-color="currentColor"/></linearGradient>'
    '<marker id="good-m" markerWidth="4" markerHeight="4" refX="1" refY="1" orient="auto"><path d="M0 0L2 1z"/>'
    '</marker></defs><line class="edge" x1="0" y1="0" x2="5" y2="5" marker-end="url(#good-m)" '
    'style="stroke: var(--accent); stroke-width: 1.5"/><rect width="4" height="4" fill="url(#good-g)" '
    'transform="translate(1, 1) rotate(4)"/><text x="1" y="9" style="font-size: 14px; fill: currentColor">'
    "文字 &amp; 符号</text></svg>"
)


def problems_of(content: Path, out: Path) -> list[str]:
    with pytest.raises(BuildFailed) as info:
        build(content, out, cache_dir=None)
    return [str(p) for p in info.value.problems.sorted()]


@pytest.fixture
def content(tmp_path: Path) -> Path:
    folder = tmp_path / "content"
    (folder / "figures").mkdir(parents=True)
    (folder / "site.yml").write_text(SITE, encoding="utf-8")
    (folder / "index.md").write_text(INDEX, encoding="utf-8")
    return folder


def page(content: Path, body: str) -> Path:
    path = content / "page.md"
    path.write_text("---\ntitle: 页面\nslug: page\n---\n" + body, encoding="utf-8")
    return path


def test_figures_with_animation_outside_urls_or_escaped_css_are_errors(content, tmp_path):
    body = ""
    for name, inner in BAD_FIGURES.items():
        (content / "figures" / name).write_text(HEAD + inner + "</svg>", encoding="utf-8")
        body += f"```{{figure}} figures/{name}\n```\n\n"
    path = page(content, body)
    problems = problems_of(content, tmp_path / "site")
    line = {name: 5 + 3 * i for i, name in enumerate(BAD_FIGURES)}
    expected = {
        "set.svg": ["<a> is not allowed", "<set> is not allowed"],
        "animate.svg": ["<animate> is not allowed"],
        "fill.svg": [
            "<rect fill> loads 'http://evil.example/x', which is not a part of the drawing (only #id references "
            "are allowed)"
        ],
        "escaped.svg": [
            "<rect style> loads 'http://evil.example/x', which is not a part of the drawing (only #id references "
            "are allowed)"
        ],
        "marker.svg": [
            "<line marker-end> loads 'https://evil.example/m.svg#m', which is not a part of the drawing (only #id "
            "references are allowed)"
        ],
        "style.svg": [
            "<style> loads 'https://evil.example/x', which is not a part of the drawing (only #id references are "
            "allowed)",
            "<style> uses CSS @import, which is not allowed",
        ],
        "imageset.svg": [
            "<style> uses the CSS function image-set(), which is not allowed (it may load or run something)"
        ],
        "handler.svg": ["event handler attribute 'onclick' is not allowed"],
        "foreign.svg": ["<foreignObject> is not allowed", "<div> is not allowed"],
    }
    for name, reasons in expected.items():
        for reason in reasons:
            assert f"{path}:{line[name]}: figures/{name}: {reason} [figure]" in problems, (name, problems)
    assert len(problems) == sum(map(len, expected.values())), problems


def test_a_dtd_in_a_figure_is_refused(content, tmp_path):
    (content / "figures" / "dtd.svg").write_text(
        '<!DOCTYPE svg [<!ENTITY x "y">]>' + HEAD + "<text>&x;</text></svg>", encoding="utf-8"
    )
    path = page(content, "```{figure} figures/dtd.svg\n```\n")
    assert problems_of(content, tmp_path / "site") == [
        f"{path}:5: figures/dtd.svg: a DTD or entity declaration is not allowed (DTDForbidden) [figure]"
    ]


def test_raw_html_style_is_judged_by_the_same_css_rule(content, tmp_path):
    path = page(
        content,
        '<span style="background: u\\72l(http://evil.example/x)">a</span>\n'
        "<span style=\"background-image: image-set('https://evil.example/y' 1x)\">b</span>\n"
        '<span style="width: expression(alert(1))">c</span>\n'
        '<span style="color: var(--accent); margin: calc(1em + 2px)">fine</span>\n',
    )
    assert problems_of(content, tmp_path / "site") == [
        f"{path}:5: raw HTML: <span style> loads 'http://evil.example/x' from outside the site [html]",
        f"{path}:6: raw HTML: <span style> uses the CSS function image-set(), which is not allowed (it may load or "
        "run something) [html]",
        f"{path}:7: raw HTML: <span style> uses the CSS function expression(), which is not allowed (it may load or "
        "run something) [html]",
    ]


def test_an_svg_image_passes_the_figure_rule_too(content, tmp_path):
    (content / "figures" / "evil.svg").write_text(HEAD + "<script>alert(1)</script></svg>", encoding="utf-8")
    (content / "figures" / "fine.svg").write_text(GOOD_FIGURE, encoding="utf-8")
    path = page(content, "![坏](figures/evil.svg)\n\n![好](figures/fine.svg)\n")
    assert problems_of(content, tmp_path / "site") == [
        f"{path}:5: image 'figures/evil.svg': <script> is not allowed [image]"
    ]


def test_links_with_other_schemes_are_errors_however_written(content, tmp_path):
    path = page(
        content,
        "[a](JavaScript:alert(1)) [b](&#106;avascript:alert(2)) [c](data:text/html,x) [d](vbscript:x)\n"
        "[ok](https://example.com) [mail](mailto:a@example.com)\n",
    )
    tail = "URLs are not allowed (link a page of the site or an https:// address) [link]"
    assert problems_of(content, tmp_path / "site") == [
        f"{path}:5: link 'JavaScript:alert(1)': 'javascript:' {tail}",
        f"{path}:5: link 'data:text/html,x': 'data:' {tail}",
        f"{path}:5: link 'javascript:alert(2)': 'javascript:' {tail}",
        f"{path}:5: link 'vbscript:x': 'vbscript:' {tail}",
    ]


def test_a_legitimate_figure_is_inlined_as_checked(content, tmp_path):
    (content / "figures" / "good.svg").write_text(GOOD_FIGURE, encoding="utf-8")
    page(content, "```{figure} figures/good.svg\ncaption: 一张 **好** 图\n```\n")
    build(content, tmp_path / "site", cache_dir=None)
    html = (tmp_path / "site" / "page.html").read_text(encoding="utf-8")
    svg = re.search(r"<svg class=\"figure-svg\".*?</svg>", html, re.S).group(0)
    for kept in ('marker-end="url(#good-m)"', 'fill="url(#good-g)"', 'stop-color="currentColor"', 'class="edge"'):
        assert kept in svg
    assert "文字 &amp; 符号" in svg


def old_inlining(text: str) -> str:
    """How figures were inlined before the policy: the file as written, without its XML declaration and comments."""
    svg = re.sub(r"^\s*<\?xml[^>]*\?>\s*", "", text).strip()
    return re.sub(r"<!--.*?-->", "", svg, flags=re.S)


def test_the_courses_figures_pass_and_are_published_byte_for_byte_as_before():
    from builder.markdown.figure import svg_reasons
    from builder.markup_policy import serialize_svg

    figures = sorted((ROOT / "content" / "figures").glob("*.svg"))
    assert figures
    for path in figures:
        text = path.read_text(encoding="utf-8")
        reasons, root = svg_reasons(text)
        assert reasons == [], (path.name, reasons)
        assert serialize_svg(root).replace(" />", "/>") == old_inlining(text), path.name


def test_text_in_a_pages_json_cannot_open_or_close_its_script_element(content, tmp_path):
    (content / "page.md").write_text(
        "---\ntitle: 标题 <!--<script> 和 </script>\nslug: page\nsummary: 摘要 <!-- x\n---\n正文\n", encoding="utf-8"
    )
    build(content, tmp_path / "site", cache_dir=None)
    for name in ("index.html", "page.html"):
        html = (tmp_path / "site" / name).read_text(encoding="utf-8")
        data = re.search(r'<script type="application/json" id="course-data">(.*?)</script>', html, re.S).group(1)
        assert "<" not in data, (name, data)
        assert "标题 \\u003c!--\\u003cscript> 和 \\u003c/script>" in data
