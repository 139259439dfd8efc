"""Quizzes, build side: the fixture file (markup and every bad-input message with its line), formulas and
links inside quiz YAML reaching the site's math and link stages, and the course data progress relies on."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import MINIMAL, BuildFailed, build
from tests.plugin_harness import render_page, render_snippet


def test_quiz_page_declares_ids_and_feature() -> None:
    _, problems, facts = render_page(
        "```{quiz}\nid: a-1\nquestion: 问\noptions:\n  - text: x\n    correct: true\n```\n"
    )
    assert problems == [] and facts.quiz_ids == ["a-1"]
    assert "quiz-a-1" in facts.extra_ids  # so `[测验](#quiz-a-1)` passes the link checker
    assert "quiz" in facts.features


def test_links_inside_quiz_text_are_checked(make_content, tmp_path: Path) -> None:
    make_content(
        "p.md",
        "---\ntitle: 页\n---\n\n```{quiz}\nid: l\nquestion: 见 [别处](nowhere.html)\n"
        "options:\n  - text: a\n    correct: true\n    feedback: 见 [上文](#quiz-l)\n```\n",
    )
    with pytest.raises(BuildFailed) as info:
        build(make_content.dir, tmp_path / "out")
    messages = [str(p) for p in info.value.problems.items]
    # front matter is 3 lines, a blank line, the fence on line 5, `question:` on line 7
    assert len(messages) == 1, messages  # the feedback's link to the quiz's own anchor is valid
    assert messages[0].endswith("p.md:7: broken link 'nowhere.html': no page 'nowhere.html' [link]")
    assert not (tmp_path / "out").exists()


def test_course_data_lists_pages_in_course_order_with_their_quizzes(make_content, tmp_path: Path) -> None:
    quiz = "```{{quiz}}\nid: {id}\nquestion: 问\noptions:\n  - text: a\n    correct: true\n```\n"
    make_content("b-explainer.md", "---\ntitle: 图解\nkind: explainer\n---\n" + quiz.format(id="e1"))
    make_content(
        "m2.md",
        "---\ntitle: 模块二\nkind: module\nmodule: 2\n---\n" + quiz.format(id="k1") + "\n" + quiz.format(id="k2"),
    )
    make_content("m1.md", "---\ntitle: 模块一\nkind: module\nmodule: 1\n---\n正文\n")
    out = tmp_path / "out"
    build(make_content.dir, out)
    html = (out / "index.html").read_text(encoding="utf-8")
    data = json.loads(
        re.search(r'<script type="application/json" id="course-data">(.*?)</script>', html, re.S).group(1)
    )
    assert [(p["slug"], p["quizzes"]) for p in data["pages"]] == [
        ("m1", []),
        ("m2", ["k1", "k2"]),
        ("b-explainer", ["e1"]),
    ]
    assert all(p["url"] == p["slug"] + ".html" for p in data["pages"])  # planned pages are not in the course data
    page = (out / "m2.html").read_text(encoding="utf-8")
    assert (
        '<button type="button" class="page-done-toggle">标记为已学完</button>' in page
    )  # the label says what a click does


def check_every_quiz_of(content_dir: Path) -> int:
    """The authored quizzes of a course fit the schema: each renders with its correct options marked. Returns how
    many there are."""
    found = 0
    for path in sorted(content_dir.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"```\{quiz\}\n(.*?)```", text, re.S):
            data = yaml.safe_load(m.group(1))
            html, problems = render_snippet(m.group(0) + "\n", content_dir=content_dir)
            assert problems == [], (path.name, problems)
            correct = [i for i, o in enumerate(data["options"]) if o.get("correct")]
            assert html.count(" data-correct>") == len(correct)
            assert f'id="quiz-{data["id"]}"' in html and "math-error" not in html
            found += 1
    return found


def test_every_quiz_of_the_minimal_course_is_valid_and_renders() -> None:
    assert check_every_quiz_of(MINIMAL) >= 1
