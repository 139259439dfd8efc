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
