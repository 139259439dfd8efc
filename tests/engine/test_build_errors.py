"""Bad input: every problem reported as `path:line: message`, exit 1, and the previous site left intact."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from builder.output import MARKER
from tests.conftest import ROOT, BuildFailed, build


def problems_of(content: Path, out: Path) -> list[str]:
    with pytest.raises(BuildFailed) as info:
        build(content, out, cache_dir=None)
    return [str(p) for p in info.value.problems.sorted()]


def rel(content: Path, name: str) -> str:
    return str((content / name).relative_to(ROOT)) if content.is_relative_to(ROOT) else str(content / name)


def assert_untouched(out: Path) -> None:
    assert sorted(p.name for p in out.iterdir() if p.name != MARKER) == ["index.html"]
    assert (out / "index.html").read_text(encoding="utf-8") == "previous build"
    leftovers = [p.name for p in out.parent.iterdir() if p.name.startswith(".site.")]
    assert leftovers == [], f"temporary folders left behind: {leftovers}"


GOOD_PAGE = "---\ntitle: 页面\nslug: page\n---\n## 第一节\n正文。\n"


def test_bad_yaml_names_file_and_line(make_content, previous_site):
    path = make_content("page.md", "---\ntitle: 页面\ntags: [未闭合\n---\n正文\n")
    problems = problems_of(make_content.dir, previous_site)
    assert len(problems) == 1
    assert problems[0].startswith(f"{rel(make_content.dir, 'page.md')}:3: invalid YAML")
    assert path.name in problems[0]
    assert_untouched(previous_site)


def test_unknown_key_wrong_type_and_missing_title_all_reported(make_content, previous_site):
    make_content("a.md", "---\ntitle: A\ncolour: red\nminutes: 很久\n---\n正文\n")
    make_content("b.md", "---\nsummary: 没有标题\n---\n正文\n")
    problems = problems_of(make_content.dir, previous_site)
    a, b = rel(make_content.dir, "a.md"), rel(make_content.dir, "b.md")
    assert any(p.startswith(f"{a}:3: unknown front-matter key 'colour'") for p in problems), problems
    assert any(
        p.startswith(f"{a}:4: front-matter key 'minutes' must be a positive integer, got '很久'") for p in problems
    )
    assert f"{b}:1: front matter has no 'title' (required) [front-matter]" in problems
    assert_untouched(previous_site)


def test_bad_kind_and_missing_front_matter(make_content, previous_site):
    make_content("a.md", "---\ntitle: A\nkind: lesson\n---\n")
    make_content("b.md", "# 没有 front matter\n")
    problems = problems_of(make_content.dir, previous_site)
    assert any(
        ":3: unknown page kind 'lesson' (index, or a kind content/site.yml declares: module, explainer)" in p
        for p in problems
    )
    assert any(p.startswith(rel(make_content.dir, "b.md") + ":1: missing front matter") for p in problems)


def test_a_numbered_kind_needs_its_number_and_only_it_has_one(make_content, previous_site):
    make_content("a.md", "---\ntitle: A\nkind: module\n---\n")
    make_content("b.md", "---\ntitle: B\nkind: explainer\nmodule: 3\n---\n")
    problems = problems_of(make_content.dir, previous_site)
    assert (
        f"{rel(make_content.dir, 'a.md')}:3: a 'module' page has a number: add `module: <n>` to its front matter"
        in (" ".join(problems))
    )
    assert any(
        p.startswith(f"{rel(make_content.dir, 'b.md')}:4: `module:` numbers pages of a numbered kind") for p in problems
    )
    assert_untouched(previous_site)


def test_duplicate_slug(make_content, previous_site):
    make_content("a.md", "---\ntitle: A\nslug: same\n---\n")
    make_content("b.md", "---\ntitle: B\nslug: same\n---\n")
    problems = problems_of(make_content.dir, previous_site)
    assert problems == [
        f"{rel(make_content.dir, 'b.md')}:3: slug 'same' is already used by "
        f"{rel(make_content.dir, 'a.md')} [slug.duplicate]"
    ]
    assert_untouched(previous_site)


def test_prev_next_must_exist(make_content, previous_site):
    make_content("a.md", "---\ntitle: A\nprev: coming\nnext: nowhere\n---\n")
    problems = problems_of(make_content.dir, previous_site)
    assert problems == [
        f"{rel(make_content.dir, 'a.md')}:4: next: 'nowhere' is neither a page nor a planned page "
        "in content/site.yml [nav]"
    ]


def test_bad_latex_names_line_and_tex(make_content, previous_site):
    make_content("page.md", GOOD_PAGE + "\n公式 $\\frac{a}{b}$ 正常，\n但 $\\sqrt{x$ 不行。\n")
    problems = problems_of(make_content.dir, previous_site)
    assert len(problems) == 1
    assert problems[0].startswith(f"{rel(make_content.dir, 'page.md')}:9: KaTeX cannot typeset `\\sqrt{{x`: ")
    assert_untouched(previous_site)


def test_broken_links_and_anchors(make_content, previous_site):
    make_content(
        "page.md",
        GOOD_PAGE + "\n[好](index.html) [坏](missing.html)\n[锚](#第一节) [坏锚](#不存在)\n"
        "[跨页坏锚](index.html#nope) [计划中](coming.html)\n",
    )
    problems = problems_of(make_content.dir, previous_site)
    p = rel(make_content.dir, "page.md")
    assert problems == [
        f"{p}:8: broken link 'missing.html': no page 'missing.html' [link]",
        f"{p}:9: broken link '#不存在': page.html has no anchor '#不存在' [link]",
        f"{p}:10: broken link 'index.html#nope': index.html has no anchor '#nope' [link]",
    ]
    assert_untouched(previous_site)


def test_all_problems_of_all_files_are_reported_at_once(make_content, previous_site):
    make_content("a.md", GOOD_PAGE.replace("page", "a") + "$\\bad{$\n")
    make_content("b.md", GOOD_PAGE.replace("page", "b") + "[x](nope.html)\n\n```{nonsense}\n```\n")
    problems = problems_of(make_content.dir, previous_site)
    assert len(problems) == 3
    assert [p.split(":")[1] for p in problems] == ["7", "7", "9"]


def test_cli_prints_problems_and_exits_1(make_content, previous_site):
    make_content("page.md", "---\ntitle: x\nbogus: 1\n---\n")
    proc = subprocess.run(
        [sys.executable, "build.py", "--content", str(make_content.dir), "--out", str(previous_site), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "page.md:3: unknown front-matter key 'bogus'" in proc.stderr
    assert "left unchanged" in proc.stderr
    assert_untouched(previous_site)


def test_cli_success_prints_one_line_summary(make_content, tmp_path):
    make_content("page.md", GOOD_PAGE + "$x$ 和 $y$\n")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "build.py", "--content", str(make_content.dir), "--out", str(out), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("built 2 pages, 2 formulas"), lines
    assert (out / "page.html").exists() and (out / "index.html").exists()
