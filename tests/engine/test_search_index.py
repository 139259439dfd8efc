"""Search index (builder/search_index.py) and the reading-time estimate."""

from __future__ import annotations

import json
import re
from pathlib import Path

from builder.bundle import browser_data_prefix
from builder.pages import reading_minutes
from builder.search_index import build_index, cjk_grams, index_script, latin_words, page_sections
from tests.conftest import build

BODY = """<p>开头的介绍。</p>
<h2 id="scale">4.2 除以 √dₖ：缩放<a class="heading-anchor" href="#scale" aria-label="本节链接">#</a></h2>
<p>点积要<strong>缩放</strong>，<span class="katex"><span class="katex-mathml"><math><semantics><mrow><mi>Q</mi></mrow>
<annotation encoding="application/x-tex">\\sqrt{d_k}</annotation></semantics></math></span><span class="katex-html" aria-hidden="true">QVISUAL</span></span></p>
<div class="widget"><p class="widget-title">交互演示</p><div class="widget-body"><table><tr><td>0.123</td></tr></table></div>
<script type="application/json" class="widget-data">{"secret": "不要索引"}</script></div>
<figure class="figure"><svg><title>图题</title><text>SVGTEXT</text></svg><figcaption>图注 Softmax</figcaption></figure>
<h3 id="code">代码</h3>
<pre><code>np.sqrt(d_k)</code></pre><button type="button">运行</button>
"""  # noqa: E501 (HTML as the build writes it)


def test_sections_are_cut_at_headings_and_keep_only_readable_text() -> None:
    sections = page_sections(BODY)
    assert [(h, i) for h, i, _ in sections] == [("", ""), ("4.2 除以 √dₖ：缩放", "scale"), ("代码", "code")]
    scale_text = sections[1][2]
    assert "点积要缩放" in scale_text and "Q" in scale_text  # inline markup joins, MathML text stays
    assert "图注 Softmax" in scale_text and "交互演示" in scale_text
    for excluded in ("QVISUAL", "sqrt{d_k}", "不要索引", "0.123", "SVGTEXT", "图题", "#"):
        assert excluded not in scale_text, excluded
    assert sections[2][2] == "np.sqrt(d_k)"  # code is searchable, the button label is not


def test_cjk_text_is_indexed_by_characters_and_bigrams_latin_by_lowercase_words() -> None:
    assert cjk_grams("缩放点积 softmax 温度") == {"缩", "放", "点", "积", "缩放", "放点", "点积", "温", "度", "温度"}
    assert latin_words("Scaled Dot-Product softmax(QK^T) 2017") == {
        "scaled",
        "dot",
        "product",
        "softmax",
        "qk",
        "t",
        "2017",
    }


def test_postings_point_at_the_sections_that_contain_a_gram() -> None:
    index = build_index([("a.html", "甲页", BODY), ("b.html", "温度专题", "<p>温度越低越集中。</p>")])
    sections = index["sections"]
    assert [s[0] for s in sections] == [0, 0, 0, 1]
    assert index["pages"] == [["a.html", "甲页"], ["b.html", "温度专题"]]
    for gram, postings in index["grams"].items():
        for n in postings:
            page_title = index["pages"][sections[n][0]][1]
            assert gram in f"{page_title} {sections[n][1]} {sections[n][3]}"
    assert index["grams"]["缩放"] == [1]  # heading and text of section 1 only
    assert index["grams"]["温度"] == [3]
    assert index["words"]["softmax"] == [1]
    assert "甲页" in index["grams"] and index["grams"]["甲页"] == [0]  # the page title goes with its first section


def test_index_script_sets_one_global_holding_json() -> None:
    index = build_index([("a.html", "页", "<p>内容 </script> 结束</p>")])
    script = index_script(index).decode("utf-8")
    prefix = browser_data_prefix("search", "index")
    m = re.fullmatch(re.escape(prefix) + r"(.*);\n", script, re.S)
    assert m and json.loads(m.group(1)) == index


def test_built_site_embeds_the_index_and_links_it_with_a_content_hash(make_content, tmp_path: Path) -> None:
    make_content("p.md", "---\ntitle: 温度\n---\n## 缩放的原因 {#why}\n\n除以根号 dk 防止 softmax 饱和。\n")
    out = tmp_path / "out"
    build(make_content.dir, out)
    script = (out / "assets" / "search-index.js").read_text(encoding="utf-8")
    prefix = browser_data_prefix("search", "index")
    assert script.startswith(prefix)
    index = json.loads(script[len(prefix) : script.rindex(";")])
    assert [p[0] for p in index["pages"]] == ["p.html"]  # the index page itself is not searched
    assert ["缩放的原因", "why"] == index["sections"][-1][1:3]
    for page in ("index.html", "p.html"):
        html = (out / page).read_text(encoding="utf-8")
        assert re.search(r'data-search-index="assets/search-index\.js\?v=[0-9a-f]{10}"', html), page
        assert '<script src="assets/search-index.js' not in html  # loaded lazily, on first search


def test_reading_minutes_counts_chinese_characters_and_latin_words() -> None:
    assert reading_minutes("") == 1  # never "约 0 分钟"
    assert reading_minutes("注" * 350) == 1
    assert reading_minutes("注" * 3500) == 10
    assert reading_minutes("word " * 2000) == 10
    assert reading_minutes("注" * 1750 + " word" * 1000) == 10  # 5 min of Chinese + 5 min of English
    assert reading_minutes("，。！？" * 1000) == 1  # punctuation is not reading


# --- the fast tokenizer and the formula stand-ins must give exactly what html.parser gives -------------------

TRICKY_BODIES = [
    BODY,
    '<p>A &amp; B &lt;tag&gt; a < b, 1<2 &#x4e2d;&nbsp;x</p><h2 ID="x&amp;y" class=plain>标题<br/>二</h2><p>尾</p>',
    '<div class="widget-body"><br><p>不要</p><br/></div><p>前<SCRIPT type="t">if (a<b) { x = "<p>" }</script >后</p>',
    '<style>p > a { color: red }</style><p>样式之后</p><h3 id=\'q\'>单引号</h3><p>文<img src="x.png" alt="图">字</p>',
    '<p>注释前<!-- 注释 <p>里</p> -->注释后</p><h2 id="c">C</h2>',  # comment: html.parser path
    '<p><a b=c/>斜线</a></p><h4 id="d">D</h4><p>x</p>',  # unquoted value next to "/": html.parser path
    '<p>未闭合<script>var s = "</p>";',  # script without its closing tag: the rest is raw text
    '<aside class="callout"><p>提示 <code>x &lt; y</code></p></aside><details><summary>展开</summary>内容</details>',
    '<h2 id="e">E <span class="heading-anchor">#</span></h2><p>x<textarea><b>t</textarea>y</p><p>z</p>',
]


def test_fast_tokenizer_gives_exactly_what_html_parser_gives() -> None:
    from builder.search_index import _SectionSplitter

    for body in TRICKY_BODIES:
        assert page_sections(body) == page_sections(body, reference=True), body
    # not by always falling back: only comments and the "/"-touching unquoted value need html.parser
    fast = [b for b in TRICKY_BODIES if _SectionSplitter().feed_fast(b)]
    assert len(fast) == len(TRICKY_BODIES) - 2


def test_formula_stand_ins_change_nothing_wherever_the_formula_sits() -> None:
    formula = (
        '<span class="katex"><span class="katex-mathml"><math><semantics><mrow><msup><mi>K</mi><mo>⊤</mo>'
        '</msup><mspace width="1em"/><mtext>&lt;分&gt;</mtext></mrow><annotation encoding="application/x-tex">'
        'K^\\top</annotation></semantics></math></span><span class="katex-html" aria-hidden="true"><span '
        'class="base"><svg><path d="M0 0"/></svg>KVISUAL</span></span></span>'
    )
    body = (
        f'<p>开头 {formula} 中间</p><h2 id="f">标题 {formula}</h2><div class="widget-body">{formula}</div>'
        f'<div class="cell-output"><span>{formula}</span></div><p>结尾{formula}</p>'
    )
    fast = page_sections(body, [formula])
    assert fast == page_sections(body, reference=True)
    assert "KVISUAL" not in str(fast) and "开头 K⊤<分> 中间" in fast[0][2] and fast[1][0] == "标题 K⊤<分>"


def check_search_sections_of(content_dir: Path) -> None:
    """Every page of a course (widgets, code cells, quizzes, math) through the build's fast path gives the sections
    html.parser gives."""
    from builder import pipeline
    from builder.content import load_site
    from builder.errors import Problems
    from builder.model import BuildOptions
    from builder.search_index import _SectionSplitter
    from tests.conftest import ROOT, TEST_CACHE

    # the tests' cache: cells, formulas
    options = BuildOptions(root=ROOT, content_dir=content_dir, python_runtime=False, jobs=1, cache_dir=TEST_CACHE)
    problems = Problems()
    site = load_site(options.content_dir, options.root, problems)
    rendered, _ = pipeline.body_stages(pipeline.markdown_parser(options), site, site.pages, options)
    searched = [(page.source, page.body_html, page.facts) for page in rendered if page.source.kind != "index"]
    assert searched and not problems and not any(page.context.problems for page in rendered)
    for source, html, facts in searched:
        assert [s[:3] for s in facts.search_sections] == page_sections(html, reference=True), source.rel
        assert _SectionSplitter().feed_fast(html), source.rel  # the build's own markup takes the fast path


def test_search_sections_of_the_minimal_course_equal_html_parser_s() -> None:
    from tests.conftest import MINIMAL

    check_search_sections_of(MINIMAL)
