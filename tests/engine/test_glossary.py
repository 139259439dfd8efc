"""content/glossary.yml (issue 18 point 3): a synonym in the prose is a warning with `path:line` that does not
fail the build (exit 0), a malformed glossary is an error, the search index carries the groups of words, and
the search engine expands a query with them (掩码 finds 遮罩 and mask)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, BuildFailed, build, run_js_module

GLOSSARY = (
    "- term: 遮罩\n  synonyms: [掩码]\n  english: mask\n  definition: 挡住不许看的位置。\n"
    "- term: 因果遮罩\n  synonyms: [因果掩码]\n  english: causal mask\n  definition: 只许看前面。\n"
)


def cli(content: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            str(ROOT / "build.py"),
            "--content",
            str(content),
            "--out",
            str(out),
            "--no-python",
            "--no-cache",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def test_a_synonym_is_a_warning_with_its_line_and_the_build_succeeds(make_content, tmp_path: Path) -> None:
    make_content("glossary.yml", GLOSSARY)
    make_content("p.md", "---\ntitle: 页\n---\n\n第一段。\n\n这里用了因果掩码，\n还有掩码。\n")
    result = cli(make_content.dir, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    rel = (
        f"{make_content.dir.relative_to(ROOT)}/p.md"
        if make_content.dir.is_relative_to(ROOT)
        else str(make_content.dir / "p.md")
    )
    lines = [line for line in result.stderr.splitlines() if "[glossary]" in line]
    assert lines == [
        f"{rel}:7: warning: '因果掩码' is a synonym: the glossary's word is '因果遮罩' [glossary]",
        f"{rel}:8: warning: '掩码' is a synonym: the glossary's word is '遮罩' [glossary]",
    ]
    assert (tmp_path / "out" / "p.html").is_file()


def test_an_error_still_fails_the_build_and_a_bad_glossary_is_one(make_content, tmp_path: Path) -> None:
    make_content("glossary.yml", "- term: 遮罩\n  colour: red\n  definition: x\n")
    with pytest.raises(BuildFailed) as failed:
        build(make_content.dir, tmp_path / "out")
    assert [p.line for p in failed.value.problems.errors] == [1]


def index_of(out: Path) -> dict:
    from builder.bundle import browser_data_prefix

    text = (out / "assets" / "search-index.js").read_text(encoding="utf-8")
    return json.loads(text[len(browser_data_prefix("search", "index")) :].rstrip().rstrip(";"))


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node")
def test_search_expands_a_query_with_its_synonyms(make_content, tmp_path: Path) -> None:
    make_content("glossary.yml", GLOSSARY)
    make_content(
        "a.md",
        "---\ntitle: 甲\n---\n\n## 遮罩一节\n\n这里讲遮罩。\n\n## 英文一节\n\nThe mask hides.\n\n## 别的\n\n无关。\n",
    )
    out = tmp_path / "out"
    build(make_content.dir, out)
    index = index_of(out)
    assert ["遮罩", "掩码", "mask"] in index["synonyms"]
    script = (
        "import { search } from './engine.mjs'; import { readFileSync } from 'node:fs';"
        "const index = JSON.parse(readFileSync('data.json', 'utf8'));"
        "process.stdout.write(JSON.stringify(['掩码', 'mask', '遮罩'].map((q) => search(index, q)"
        ".map((r) => index.sections[r.section][1]))));"
    )
    found = run_js_module(tmp_path, {"engine.mjs": ROOT / "theme" / "js" / "site" / "search-engine.js"}, script, index)
    for headings in found:
        assert {"遮罩一节", "英文一节"} <= set(headings) and "别的" not in headings


def test_the_course_uses_the_glossarys_words() -> None:
    """Issue 32 point 14: every page of content/ through the real parser with the course's glossary gives no
    synonym warning (the build only warns; this makes the chosen words binding). Widgets, code cells and their
    {data} quotes are blanked first (same line count): the glossary looks at prose, and they would need the model."""
    import re

    from tests.conftest import TEST_CACHE
    from tests.plugin_harness import render_page

    blank = re.compile(r"^```\{(?:widget|code-cell)\}.*?^```[ \t]*$", re.S | re.M)
    warnings = []
    for path in sorted((ROOT / "content").glob("*.md")):
        _, _, body = path.read_text(encoding="utf-8").split("---\n", 2)
        body = blank.sub(lambda m: "\n" * m.group(0).count("\n"), body)
        body = re.sub(r"\{data\}`[^`]*`", "几", body)
        _, problems, _ = render_page(body, rel=f"content/{path.name}", cache_dir=TEST_CACHE)  # formulas typeset once
        warnings += [p for p in problems if "[glossary]" in p]
    assert warnings == []
