"""A new page is picked up everywhere without registering it: the index's learning path and course data (progress),
the search index, prev/next, and the offline zip; the GitHub Pages workflow runs the same `make site`. Checked by
adding a module page to a copy of the course."""

from __future__ import annotations

import json
import re
import zipfile

from builder.zipsite import zip_site
from tests.conftest import build, copy_content

NEW_PAGE = """---
title: 试验模块：路线的下一站
kind: module
module: 8
prev: module-07-train-transformer
summary: 一个只在测试里存在的模块。
---
## 内容 {#content}

一段独一无二的文字：琥珀色的试验句子。
"""


def test_a_new_module_page_joins_the_path_progress_search_and_zip(tmp_path):
    content = copy_content(tmp_path / "content")
    (content / "module-08-trial.md").write_text(NEW_PAGE, encoding="utf-8")
    site = tmp_path / "site"
    build(content, site)
    index = (site / "index.html").read_text("utf-8")
    path = re.search(r'<ol class="cards course-path".*?</ol>', index, re.S).group(0)
    slugs = re.findall(r'data-slug="([^"]+)"', path)
    order = ["module-04-bigram-mlp", "module-05-attention", "module-06-transformer", "module-07-train-transformer"]
    assert [slugs.index(s) for s in order + ["module-08-trial"]] == sorted(
        slugs.index(s) for s in order + ["module-08-trial"]
    )
    course = json.loads(
        re.search(r'<script type="application/json" id="course-data">(.*?)</script>', index, re.S).group(1)
    )
    tracked = [p["slug"] for p in course["pages"]]
    assert "module-08-trial" in tracked and "module-07-train-transformer" in tracked  # progress tracks them
    search = (site / "assets" / "search-index.js").read_text("utf-8")
    assert (
        "琥珀色的试验句子" in search and "Transformer 完整架构" in search and "在唐诗上训练一个 Transformer" in search
    )
    trial = (site / "module-08-trial.html").read_text("utf-8")
    assert 'href="module-07-train-transformer.html"' in trial  # its prev is a live link
    names = zipfile.ZipFile(zip_site(site, tmp_path / "course.zip")).namelist()
    assert any(n.endswith("/module-08-trial.html") for n in names)
    assert any(n.endswith("/module-07-train-transformer.html") for n in names)
    assert any("/assets/widgets/poem-writer-" in n for n in names)  # the typing widget's weights are in the zip
    assert any(n.endswith("/module-06-transformer.html") for n in names)


def test_module_05_and_06_link_each_other_live(tmp_path):
    site = tmp_path / "site"
    build(copy_content(tmp_path / "content"), site)
    m05 = (site / "module-05-attention.html").read_text("utf-8")
    m06 = (site / "module-06-transformer.html").read_text("utf-8")
    m07 = (site / "module-07-train-transformer.html").read_text("utf-8")
    assert re.search(r'<a [^>]*href="module-06-transformer.html"', m05)
    assert re.search(r'<a [^>]*href="module-05-attention.html"', m06)
    assert re.search(r'<a [^>]*href="module-07-train-transformer.html"', m06)
    assert re.search(r'<a [^>]*href="module-06-transformer.html"', m07)
