"""What a site ships and shows is what its pages use: the scripts and stylesheets of the widget kinds its pages show
(not every kind its course defines), and on the index one section per kind of page that has pages."""

from __future__ import annotations

import re
import shutil

from tests.conftest import MINIMAL, build


def test_a_site_ships_only_the_scripts_and_stylesheets_of_the_widget_kinds_its_pages_show(tmp_path) -> None:
    content = tmp_path / "content"
    shutil.copytree(MINIMAL, content, ignore=shutil.ignore_patterns("__pycache__"))
    page = content / "softmax.md"
    text = page.read_text(encoding="utf-8")
    without = re.sub(r"## 拖动试试 \{#widget\}\n\n```\{widget\} softmax3\n.*?```\n\n", "", text, flags=re.S)
    assert without != text
    page.write_text(without, encoding="utf-8")

    build(content, tmp_path / "site", cache_dir=tmp_path / "cache")
    assets = {p.name for p in (tmp_path / "site" / "assets").iterdir()}
    assert "widget-softmax3.js" not in assets and "widgets-softmax3.css" not in assets  # minimal_course's one kind
    assert "site.js" in assets

    page.write_text(text, encoding="utf-8")  # the kind shown again: shipped again
    build(content, tmp_path / "site", cache_dir=tmp_path / "cache")
    assets = {p.name for p in (tmp_path / "site" / "assets").iterdir()}
    assert {"widget-softmax3.js", "widgets-softmax3.css"} <= assets


def test_the_index_shows_no_section_for_a_kind_without_pages(make_content, tmp_path) -> None:
    """site.yml declares `module` and `explainer`; the site has only a planned explainer: the index has its
    section and none for the modules (no heading over an empty list)."""
    build(make_content.dir, tmp_path / "site", cache_dir=tmp_path / "cache")
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'<section class="outline" aria-labelledby="outline-(\w+)">', index) == ["explainer"]
    assert 'data-slug="coming"' in index and "课程模块" not in index

    make_content("m1.md", "---\ntitle: 第一课\nkind: module\nmodule: 1\n---\n正文。\n")
    build(make_content.dir, tmp_path / "site", cache_dir=tmp_path / "cache")
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'<section class="outline" aria-labelledby="outline-(\w+)">', index) == ["module", "explainer"]
