"""Widget fixtures: every widget folder of a course (`attention_course/widgets/<name>/`,
`examples/minimal/minimal_course/widgets/<name>/`) holds a `fixture.md`, a Markdown fragment with one or more
```{widget} <name>``` blocks showing its typical options. The folders are found the way the build finds them
(builder/course.py: `Course.widget_folders`, the sub-folders with a widget.py), so a new folder with its fixture is
tested without naming it anywhere:

- tests/engine/test_widget_fixtures.py and tests/course/test_widget_fixtures.py render each fixture through the
  build's stages (examples/minimal's in the engine tests; the attention course's, whose model-backed kinds read
  the real model's results, in the course tests);
- tests/e2e/test_widget_fixtures.py opens the fixture site of each course (one page per folder, built once per run:
  tests/conftest.py SHARED_BUILDS) in Chromium, mounts every widget and waits for it to say `data-ready`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

WIDGET_BLOCK_RE = re.compile(r"^```\{widget\} ([a-z0-9-]+)[ \t]*$", re.M)


def widget_folders(content_dir: Path) -> list[tuple[str, Path]]:
    """(kind, folder) of every widget kind of the course `content_dir`'s site.yml names, by folder name."""
    from builder.course import load_course

    course = load_course(content_dir, ROOT)
    return sorted(((kind, folder) for kind, folder in course.widget_folders.items()), key=lambda kf: kf[1].name)


def fixture_params(content_dir: Path) -> list:
    """One pytest param per widget folder of the course: (kind, folder), id `<course folder>/<widget folder>`."""
    return [pytest.param(kind, folder, id=folder.name) for kind, folder in widget_folders(content_dir)]


def fixture_text(kind: str, folder: Path) -> str:
    """The folder's fixture.md; fails the test if there is none or it shows no widget of its own kind."""
    path = folder / "fixture.md"
    if not path.is_file():
        pytest.fail(f"{path.relative_to(ROOT)} is missing: every widget folder has a fixture.md", pytrace=False)
    text = path.read_text(encoding="utf-8")
    kinds = WIDGET_BLOCK_RE.findall(text)
    assert kinds and set(kinds) == {kind}, f"{path.relative_to(ROOT)} shows {kinds}, not ```{{widget}} {kind}``` blocks"
    return text


def page_name(folder: Path) -> str:
    return f"widget-{folder.name.replace('_', '-')}"


def fixture_content(content_dir: Path, dest: Path) -> Path:
    """A content folder with one page per widget folder of the course of `content_dir` (`widget-<folder>.md`: its
    fixture.md under a title) and an index linking them; its site.yml names the same course, which imports from
    here too (a course package beside its pages, like examples/minimal's, is linked in)."""
    from builder.course import course_name, load_course

    course = load_course(content_dir, ROOT)
    name, _ = course_name(content_dir)
    dest.mkdir(parents=True, exist_ok=True)
    if course.root is not None and course.root.is_relative_to(content_dir.resolve()):
        (dest / course.root.name).symlink_to(course.root, target_is_directory=True)
    (dest / "site.yml").write_text(
        f"series: 组件样例\ntitle: {name} 的组件\ncourse: {name}\nplanned: []\n", encoding="utf-8"
    )
    links = []
    for kind, folder in widget_folders(content_dir):
        if not (folder / "fixture.md").is_file():
            continue  # its own test fails and names it
        page = page_name(folder)
        (dest / f"{page}.md").write_text(
            f"---\ntitle: 组件 {kind}\n---\n{(folder / 'fixture.md').read_text(encoding='utf-8')}", encoding="utf-8"
        )
        links.append(f"- [{kind}]({page}.html)\n")
    (dest / "index.md").write_text("---\ntitle: 组件样例\nkind: index\n---\n" + "".join(links), encoding="utf-8")
    return dest


def check_fixture_renders(content_dir: Path, kind: str, folder: Path) -> None:
    """The fixture, through the build's stages as a page of its course: no problem, and every block a widget of its
    kind with its fallback and its data."""
    from tests.conftest import TEST_CACHE
    from tests.plugin_harness import render_page

    text = fixture_text(kind, folder)
    html, problems, facts = render_page(text, content_dir=content_dir, cache_dir=TEST_CACHE)
    assert problems == [], f"{folder.relative_to(ROOT)}/fixture.md: {problems}"
    roots = re.findall(rf'<div class="widget widget-{kind}" data-widget="{kind}" id="(widget-\d+)"', html)
    assert len(roots) == len(WIDGET_BLOCK_RE.findall(text)), html[:500]
    assert html.count('<script type="application/json" class="widget-data">') == len(roots)
    assert "widgets" in facts.features and {f"widget-{kind}", f"lazy-widget-{kind}"} & facts.features
