"""Issue 20 (hardening), at the level of a whole build: what the fixture runner cannot see."""

from __future__ import annotations

import shutil

from tests.conftest import ROOT, build

PNG = ROOT / "tests" / "engine" / "fixtures" / "content" / "figures" / "dot.png"


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


# ------------------------------------------------------------------------------------------ point 5: no tracebacks

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

from tests.engine.test_build_errors import GOOD_PAGE, assert_untouched, problems_of, rel  # noqa: E402


@pytest.mark.parametrize("case", ["loop", "folder", "dangling"])
def test_unreadable_page_files_are_reported_not_raised(make_content, previous_site, case):
    make_content("page.md", GOOD_PAGE)
    bad = make_content.dir / "bad.md"
    if case == "loop":
        os.symlink("bad.md", bad)
    elif case == "folder":
        (bad / "inner").mkdir(parents=True)
    else:
        os.symlink("nowhere.md", bad)
    problems = problems_of(make_content.dir, previous_site)
    reason = {
        "loop": "a symbolic link that loops",
        "folder": "a folder, not a page file",
        "dangling": "a symbolic link to a file that does not exist",
    }[case]
    assert problems == [f"{rel(make_content.dir, 'bad.md')}: cannot read the page: it is {reason} [front-matter]"]
    assert_untouched(previous_site)


def test_too_deeply_nested_formula_is_a_math_error(make_content, previous_site):
    make_content("page.md", GOOD_PAGE + "\n$" + r"\frac{1}{" * 2000 + "x" + "}" * 2000 + "$\n")
    problems = problems_of(make_content.dir, previous_site)
    assert len(problems) == 1 and problems[0].startswith(f"{rel(make_content.dir, 'page.md')}:8: KaTeX cannot typeset")
    assert problems[0].endswith("the formula is nested too deeply for KaTeX [math]")
    assert_untouched(previous_site)


def test_a_full_disk_is_reported_and_cleaned_up(make_content, previous_site, monkeypatch):
    from builder import output

    make_content("page.md", GOOD_PAGE)
    real = output.Path.write_bytes

    def full(self, data):
        if self.name == "page.html":
            raise OSError(28, "No space left on device")
        return real(self, data)

    monkeypatch.setattr(output.Path, "write_bytes", full)
    problems = problems_of(make_content.dir, previous_site)
    assert problems == [f"{previous_site}: cannot write the site: No space left on device [output]"]
    assert_untouched(previous_site)


def test_ctrl_c_prints_one_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    from builder import cli

    def interrupted(options):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_site", interrupted)
    assert cli.main(["--out", str(tmp_path / "site"), "--no-cache"]) == 130
    err = capsys.readouterr().err
    assert err == f"build interrupted; {tmp_path / 'site'} left unchanged\n"


# ------------------------------------------------------------------------------------------ point 6: one cause, once


def test_a_bad_page_is_not_reported_again_as_a_dead_neighbour(make_content, previous_site):
    make_content("a.md", "---\ntitle: A\nslug: a\nmodule: 一\nkind: module\nnext: b\n---\n正文\n")
    make_content("b.md", "---\ntitle: B\nslug: b\nprev: a\n---\n正文\n")
    assert problems_of(make_content.dir, previous_site) == [
        f"{rel(make_content.dir, 'a.md')}:4: front-matter key 'module' must be a non-negative integer, got '一' "
        "[front-matter]"
    ]
    assert_untouched(previous_site)


def test_a_broken_site_yml_is_reported_once(make_content, previous_site):
    make_content("site.yml", "series: [s\ntitle: t\n")
    make_content("b.md", "---\ntitle: B\nslug: b\nprev: coming\nnext: coming\n---\n正文\n")
    problems = problems_of(make_content.dir, previous_site)
    assert len(problems) == 1 and problems[0].startswith(f"{rel(make_content.dir, 'site.yml')}:2: invalid YAML")
    assert_untouched(previous_site)


def test_a_byte_order_mark_before_the_front_matter_is_accepted(make_content, tmp_path):
    make_content("page.md", "\ufeff" + GOOD_PAGE)
    build(make_content.dir, tmp_path / "site", cache_dir=None)
    assert "<h1" in (tmp_path / "site" / "page.html").read_text(encoding="utf-8")


def test_warnings_are_printed_and_the_build_succeeds(make_content, tmp_path):
    make_content("page.md", "---\ntitle: 页面\nslug: page\n---\n## 小结\n\n## 小结\n")
    out = tmp_path / "site"
    run = subprocess.run(
        [
            sys.executable,
            "build.py",
            "--content",
            str(make_content.dir),
            "--out",
            str(out),
            "--no-cache",
            "--no-python",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    # no long step ran (no cell, no formula): the warning, then the stages' seconds (builder/progress.py)
    warnings, summary = run.stderr.split("time: ")
    assert summary.splitlines()[-1].split()[0] == "write"
    assert warnings.splitlines() == [
        f"{rel(make_content.dir, 'page.md')}:7: warning: heading id '小结' is already used on this page; this heading "
        "gets '小结-1' (give it an explicit id: `## 标题 {#my-id}`) [heading]"
    ]
    assert 'id="小结-1"' in (out / "page.html").read_text(encoding="utf-8")
