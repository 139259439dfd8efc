"""Fast builds: a rebuild re-renders only pages whose inputs changed, re-uses unchanged output files (hard
links), stays correct (link errors on cached pages, pages with problems never cached), and parallel
rendering gives the same bytes as serial rendering."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from builder import cache as cachestore
from builder import page_cache, pipeline
from builder.errors import BuildFailed
from builder.model import BuildOptions
from builder.pipeline import build_site
from tests.conftest import ROOT


def page(title: str, body: str) -> str:
    return f"---\ntitle: {title}\n---\n{body}\n"


@pytest.fixture
def course(make_content, tmp_path, monkeypatch):
    """A small site plus a spy recording which pages each build renders."""
    make_content("a.md", page("页面 A", "## 第一节 {#one}\n\n分数 $QK^\\top$ 见[页面 B](b.html#two)。"))
    make_content("b.md", page("页面 B", "## 第二节 {#two}\n\n$$\n\\sqrt{d_k}\n$$\n\n回到[页面 A](a.html#one)。"))
    make_content("c.md", page("页面 C", "## 第三节\n\n普通文字。"))
    rendered: list[list[str]] = []
    original = pipeline.parse
    # A page's cache key is its content, not its folder: forget what earlier tests of this process built (the
    # same index.md), so the first build here is cold.
    monkeypatch.setattr(cachestore, "_memory", {})

    def spy(md, source, site):
        rendered[-1].append(source.rel.rsplit("/", 1)[-1])
        return original(md, source, site)

    monkeypatch.setattr(pipeline, "parse", spy)

    def run():
        rendered.append([])
        build_site(run.options)
        return sorted(rendered[-1])

    run.options = BuildOptions(
        root=ROOT,
        content_dir=make_content.dir,
        theme_dir=ROOT / "theme",  # type: ignore[attr-defined]
        out_dir=tmp_path / "site",
        cache_dir=tmp_path / "cache",
        python_runtime=False,
        jobs=1,
    )
    run.write = make_content  # type: ignore[attr-defined]
    return run


def test_no_change_rebuild_renders_nothing_and_reuses_every_file(course):
    assert course() == ["a.md", "b.md", "c.md", "index.md"]
    out: Path = course.options.out_dir
    inodes = {p: p.stat().st_ino for p in out.rglob("*") if p.is_file()}
    assert course() == []
    assert {p: p.stat().st_ino for p in out.rglob("*") if p.is_file()} == inodes


def test_one_edit_re_renders_only_that_page(course):
    course()
    out: Path = course.options.out_dir
    before = {p.name: (p.stat().st_ino, p.read_bytes()) for p in out.glob("*.html")}
    css_inode = (out / "assets" / "site.css").stat().st_ino
    course.write("c.md", page("页面 C", "## 第三节\n\n改过的文字。"))
    assert course() == ["c.md"]
    after = {p.name: (p.stat().st_ino, p.read_bytes()) for p in out.glob("*.html")}
    assert "改过的文字" in after["c.html"][1].decode()
    assert after["c.html"] != before["c.html"]
    # other pages' HTML may change only where it names the search index (which covers every page's text)
    strip = lambda html: re.sub(rb"search-index\.js\?v=\w+", b"", html)  # noqa: E731
    assert strip(after["a.html"][1]) == strip(before["a.html"][1])
    css = out / "assets" / "site.css"
    assert css.stat().st_ino == css_inode  # unchanged files are the very same file (a hard link, not a copy)


def test_cached_page_still_gets_its_broken_link_reported(course):
    course()
    course.write("b.md", page("页面 B", "## 改名的一节 {#renamed}\n\n正文。"))  # a.md links to b.html#two
    with pytest.raises(BuildFailed) as failed:
        course()
    messages = [str(p) for p in failed.value.problems.sorted()]
    assert any("a.md:6:" in m and "b.html#two" in m for m in messages), messages


def test_failed_build_keeps_previous_site_and_page_with_problems_is_not_cached(course):
    course()
    out: Path = course.options.out_dir
    good = (out / "c.html").read_bytes()
    course.write("c.md", page("页面 C", "坏公式 $\\frac{a$"))
    for _ in range(2):  # reported again on the next build: the broken page was not cached
        with pytest.raises(BuildFailed) as failed:
            course()
        assert any("c.md:4:" in str(p) and "\\frac{a" in str(p) for p in failed.value.problems.items)
    assert (out / "c.html").read_bytes() == good
    assert not list(out.parent.glob(".site.new-*"))


def test_theme_template_change_re_renders_html_without_re_rendering_bodies(course, tmp_path, monkeypatch):
    import shutil

    course()
    theme = tmp_path / "theme"
    shutil.copytree(ROOT / "theme", theme)
    course.options = dataclasses.replace(course.options, theme_dir=theme)
    base = theme / "templates" / "base.html"
    base.write_text(
        base.read_text(encoding="utf-8").replace("</body>", "<!-- 模板已修改 -->\n</body>"), encoding="utf-8"
    )
    assert course() == []  # bodies do not depend on templates
    assert "模板已修改" in (course.options.out_dir / "a.html").read_text(encoding="utf-8")


def test_parallel_build_is_byte_identical_to_serial_build(make_content, tmp_path, monkeypatch):
    for i in range(12):
        shared = "\\mathrm{softmax}(QK^\\top)"
        make_content(
            f"p{i:02d}.md",
            page(
                f"第 {i} 页", f"## 节 {{#s}}\n\n${shared}$ 与 $x_{{{i}}}^2$，见[下一页](p{(i + 1) % 12:02d}.html#s)。"
            ),
        )
    monkeypatch.setattr(page_cache, "POOL_MIN_PAGES", 4)

    def site_bytes(jobs: int, name: str) -> dict[str, bytes]:
        out = tmp_path / name
        build_site(
            BuildOptions(
                root=ROOT,
                content_dir=make_content.dir,
                theme_dir=ROOT / "theme",
                out_dir=out,
                cache_dir=tmp_path / f"cache-{name}",
                python_runtime=False,
                jobs=jobs,
            )
        )
        return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}

    parallel = site_bytes(2, "parallel")
    serial = site_bytes(1, "serial")
    assert parallel.keys() == serial.keys() and len(parallel) > 12
    assert [k for k in parallel if parallel[k] != serial[k]] == []


def test_text_edit_re_renders_one_template_yet_every_page_links_the_new_search_index(course, monkeypatch):
    from builder import pages as pagestage

    course()
    templated: list[str] = []
    original = pagestage.render_page

    def spy(env, site, page, *args, **kwargs):
        templated.append(page.source.rel.rsplit("/", 1)[-1])
        return original(env, site, page, *args, **kwargs)

    monkeypatch.setattr(pagestage, "render_page", spy)
    course.write("c.md", page("页面 C", "## 第三节\n\n独一无二的新词。"))
    assert course() == ["c.md"]
    assert templated == ["c.md"]  # same reading time, titles and navigation: no other page's context changed
    out: Path = course.options.out_dir
    index_js = (out / "assets" / "search-index.js").read_bytes()
    assert "独一无二的新词".encode() in index_js
    import hashlib

    expected = f'data-search-index="assets/search-index.js?v={hashlib.sha256(index_js).hexdigest()[:10]}"'
    for html_file in out.glob("*.html"):
        html = html_file.read_text(encoding="utf-8")
        if html_file.name == "404.html":
            continue  # it searches through index.html?q=…, it loads no index itself
        assert expected in html, html_file.name  # cached pages got the new index URL too
        assert "\ufdd0" not in html


def test_title_edit_reaches_every_page_that_shows_it(course):
    course()
    course.write("b.md", page("页面 B 改名", "## 第二节 {#two}\n\n$$\n\\sqrt{d_k}\n$$\n\n回到[页面 A](a.html#one)。"))
    assert course() == ["b.md"]
    out: Path = course.options.out_dir
    assert "页面 B 改名" in (out / "index.html").read_text(encoding="utf-8")  # the index lists every title
    for name in ("a.html", "c.html"):  # other pages carry only their own course entry (and no nav to B)
        assert "页面 B 改名" not in (out / name).read_text(encoding="utf-8"), name


def test_title_edit_reaches_the_pages_that_link_to_it_in_prev_next(course):
    course()
    course.write("a.md", "---\ntitle: 页面 A\nslug: a\nnext: b\n---\n## 第一节 {#one}\n\n正文。\n")
    course()
    course.write("b.md", page("页面 B 又改名", "## 第二节 {#two}\n\n回到[页面 A](a.html#one)。"))
    course()
    out: Path = course.options.out_dir
    assert "页面 B 又改名" in (out / "a.html").read_text(encoding="utf-8")  # a's 下一篇 shows the new title
