"""Issue 20 (hardening), at the level of a whole build: what the fixture runner cannot see."""
from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import ROOT, build

PNG = ROOT / "tests" / "fixtures" / "content" / "figures" / "dot.png"


def test_local_markdown_images_are_copied_into_the_site(make_content, tmp_path):
    (make_content.dir / "img").mkdir()
    shutil.copy(PNG, make_content.dir / "img" / "x.png")
    make_content("page.md", "---\ntitle: 页面\nslug: page\n---\n![点](img/x.png)\n")
    out = tmp_path / "site"
    build(make_content.dir, out, cache_dir=None)
    html = (out / "page.html").read_text(encoding="utf-8")
    published = [p for p in (out / "assets" / "images").iterdir()]
    assert [p.name for p in published] == ["x-eaa4a94ea3.png"]
    assert published[0].read_bytes() == PNG.read_bytes()
    assert '<img src="assets/images/x-eaa4a94ea3.png" alt="点" />' in html


def test_every_page_has_a_csp_allowing_only_its_own_inline_scripts_by_hash(make_content, tmp_path):
    import base64
    import hashlib
    import re

    make_content("page.md", "---\ntitle: 页面\nslug: page\n---\n## 一节\n公式 $x^2$\n\n## 二节\n")
    out = tmp_path / "site"
    build(make_content.dir, out, cache_dir=None)
    for name in ("index.html", "page.html"):
        html = (out / name).read_text(encoding="utf-8")
        csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html).group(1)
        directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
        assert directives["default-src"] == "'self'"
        script_src = directives["script-src"].split()
        assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src
        inline = re.findall(r"<script>(.*?)</script>", html, re.S)
        hashes = {"'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'" for s in inline}
        assert {s for s in script_src if s.startswith("'sha256-")} == hashes
        assert html.index("Content-Security-Policy") < html.index("<script")
    assert len(re.findall(r"<script>", (out / "page.html").read_text(encoding="utf-8"))) == 2  # fonts, toc
