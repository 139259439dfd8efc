"""A new page is picked up everywhere without registering it: the index's learning path and course data (progress),
the search index, prev/next, and the offline zip; the GitHub Pages workflow runs the same `make site`. Checked by
adding a module page to a copy of examples/minimal."""

from __future__ import annotations

import json
import re
import zipfile

from builder.zipsite import zip_site
from tests.conftest import MINIMAL, build, copy_content

NEW_PAGE = """---
title: 试验模块：路线的下一站
kind: module
module: 2
prev: softmax
summary: 一个只在测试里存在的模块。
---
## 内容 {#content}

一段独一无二的文字：琥珀色的试验句子。
"""


def test_a_new_module_page_joins_the_path_progress_search_and_zip(tmp_path):
    content = copy_content(tmp_path / "content", MINIMAL)
    (content / "module-02-trial.md").write_text(NEW_PAGE, encoding="utf-8")
    site = tmp_path / "site"
    build(content, site)
    index = (site / "index.html").read_text("utf-8")
    path = re.search(r'<ol class="cards course-path".*?</ol>', index, re.S).group(0)
    slugs = re.findall(r'data-slug="([^"]+)"', path)
    assert slugs.index("softmax") < slugs.index("module-02-trial")
    course = json.loads(
        re.search(r'<script type="application/json" id="course-data">(.*?)</script>', index, re.S).group(1)
    )
    assert "module-02-trial" in [p["slug"] for p in course["pages"]]  # progress tracks it
    search = (site / "assets" / "search-index.js").read_text("utf-8")
    assert "琥珀色的试验句子" in search and "三个数的 softmax" in search
    trial = (site / "module-02-trial.html").read_text("utf-8")
    assert 'href="softmax.html"' in trial  # its prev is a live link
    names = zipfile.ZipFile(zip_site(site, tmp_path / "course.zip")).namelist()
    assert any(n.endswith("/module-02-trial.html") for n in names)
    assert any(n.endswith("/softmax.html") for n in names)
