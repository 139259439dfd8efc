"""Quizzes, build side: the fixture file (markup and every bad-input message with its line), formulas and
links inside quiz YAML reaching the site's math and link stages, and the course data progress relies on."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import MINIMAL, ROOT, BuildFailed, build, run_js_module
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


# ------------------------------------------------------------------------------ shuffled options (issue 32, 11)


def test_display_order_is_a_fixed_permutation_of_the_seed() -> None:
    from builder.markdown.quiz import display_order, quiz_seed

    for n in range(1, 7):
        for seed in ("a/x", "a/y", "b/x"):
            order = display_order(n, seed)
            assert sorted(order) == list(range(n))
            assert order == display_order(n, seed)  # the same on every build
    # the page and the quiz id both move it; the seed is the file's stem, whatever folder it is in
    orders = {tuple(display_order(4, quiz_seed(rel, q))) for rel in ("content/a.md", "content/b.md") for q in "pqrs"}
    assert len(orders) > 3
    assert quiz_seed("content/module-05-attention.md", "why") == quiz_seed("/tmp/x/module-05-attention.md", "why")
    # fixed across Python versions: random.Random(int).shuffle is part of the language's stability promise
    assert display_order(4, "module-05-attention/why-sqrt-dk") == display_order(4, "module-05-attention/why-sqrt-dk")


def shown(html: str) -> list[tuple[int, str, bool, str]]:
    """(authored index, key, correct, letter) of each option as the page shows it."""
    return [
        (int(m.group(1)), m.group(2), m.group(3) is not None, m.group(4))
        for m in re.finditer(
            r'<li class="quiz-option" data-index="(\d+)" data-key="([0-9a-f]+)"( data-correct)?>.*?'
            r'<span class="quiz-letter">(\w)</span>',
            html,
        )
    ]


def test_the_html_follows_the_shuffle_and_names_options_by_key() -> None:
    from builder.markdown.quiz import display_order, option_key

    source = (
        "```{quiz}\nid: order\nquestion: 问\noptions:\n"
        "  - text: 甲\n    correct: true\n    feedback: 甲的反馈\n  - text: 乙\n    feedback: 乙的反馈\n"
        "  - text: 丙\n  - text: 丁\n```\n"
    )
    html, problems = render_snippet(source)
    assert problems == []
    order = display_order(4, "test/order")
    rows = shown(html)
    assert [i for i, *_ in rows] == order
    assert [letter for *_, letter in rows] == ["A", "B", "C", "D"]  # letters are positions on screen
    assert [key for _, key, *_ in rows] == [option_key("甲乙丙丁"[i]) for i in order]
    # an option's input value, feedback slot and text travel together
    for i, key, correct, _ in rows:
        item = re.search(rf'<li class="quiz-option" data-index="{i}".*?</li>', html).group(0)
        assert f'value="{key}"' in item and f'id="quiz-order-fb-{key}"' in item and "甲乙丙丁"[i] in item
        assert correct == (i == 0)
    letter = "ABCD"[order.index(0)]
    assert f'<p class="quiz-answer">正确答案：{letter}</p>' in html


def authored_positions() -> list[tuple[str, str, list[int], int]]:
    """(page, quiz id, shown positions of the right answers, number of options) of every quiz in content/."""
    found = []
    for path in sorted((ROOT / "content").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"```\{quiz\}\n(.*?)```", text, re.S):
            html, problems = render_snippet(m.group(0) + "\n", rel=f"content/{path.name}")
            assert problems == [], (path.name, problems)
            rows = shown(html)
            found.append(
                (path.stem, yaml.safe_load(m.group(1))["id"], [p for p, r in enumerate(rows) if r[2]], len(rows))
            )
    return found


def test_no_position_holds_most_of_the_courses_answers() -> None:
    found = authored_positions()
    assert len(found) >= 4
    counts: dict[int, int] = {}
    for *_, positions, _ in found:
        for p in positions:
            counts[p] = counts.get(p, 0) + 1
    total = sum(counts.values())
    assert max(counts.values()) * 2 <= total, counts
    # and the first option is no longer where every answer sits (it was 23 of 23 before the shuffle)
    assert counts.get(0, 0) < total / 2, counts


def test_a_site_where_one_position_holds_most_answers_fails_the_build(make_content, tmp_path: Path) -> None:
    """Quiz ids picked so that the seeded shuffle shows each right answer first: the site-wide check names it."""
    from builder.markdown.quiz import display_order

    ids = [f"q{n}" for n in range(400) if display_order(3, f"p/q{n}")[0] == 0][:4]
    body = "".join(
        f"```{{quiz}}\nid: {q}\nquestion: 问 {q}\noptions:\n  - text: 对\n    correct: true\n"
        f"  - text: 错一\n  - text: 错二\n```\n\n"
        for q in ids
    )
    make_content("p.md", "---\ntitle: 页\n---\n\n" + body)
    with pytest.raises(BuildFailed) as info:
        build(make_content.dir, tmp_path / "out")
    messages = [str(p) for p in info.value.problems.items]
    assert len(messages) == 1, messages
    assert messages[0].endswith(
        f"p.md:5: 4 of the site's 4 correct answers are shown as option A (more than half): the shuffle is seeded "
        f"by the page and the quiz id, so renaming a quiz (e.g. '{ids[0]}') reshuffles it [quiz]"
    )
    # three such quizzes are too few to call it a pattern
    make_content("p.md", "---\ntitle: 页\n---\n\n" + body.rsplit("```{quiz}", 1)[0])
    build(make_content.dir, tmp_path / "out2")


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node")
def test_a_stored_answer_names_options_by_key_and_old_records_by_authored_index(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"type": "module"}', encoding="utf-8")
    site = ROOT / "theme" / "js" / "site"
    script = """
import { storedChoice } from "./quiz.js";
const option = (index, key) => ({dataset: {index, key}});
const options = [option("2", "cc"), option("0", "aa"), option("1", "bb")];
process.stdout.write(JSON.stringify([
  storedChoice(["aa"], options),          // a key, wherever the option is shown
  storedChoice([0, 2], options),          // a record from before the shuffle: authored indexes
  storedChoice(["zz"], options),          // an option whose text changed: the record is dropped
  storedChoice([7], options),
  storedChoice(["bb", 1], options),       // the same option twice counts once
]));
"""
    out = run_js_module(tmp_path, {"quiz.js": site / "quiz.js", "progress.js": site / "progress.js"}, script)
    assert out == [["aa"], ["aa", "cc"], None, None, ["bb"]]
