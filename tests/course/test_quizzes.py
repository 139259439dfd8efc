"""Issue 32 points 11 and 12, on the authored quizzes of content/ (later ones included): a quiz cannot be
answered by its shape — no "以上都对" kind of option, and the right answer is not usually the longest one — and
module 05 checks the understanding its recap claims (where Q, K, V come from, the shapes, d_k = d/h, the mask)."""

from __future__ import annotations

import re

import yaml

from tests.course.learner_text import PAGES

QUIZ_RE = re.compile(r"```\{quiz\}\n(.*?)```", re.S)


def quizzes() -> list[tuple[str, dict]]:
    return [(p.name, yaml.safe_load(m.group(1))) for p in PAGES for m in QUIZ_RE.finditer(p.read_text("utf-8"))]


def test_no_option_points_at_the_others() -> None:
    for page, quiz in quizzes():
        for option in quiz["options"]:
            text = str(option["text"])
            assert not re.search(r"以上|上述|全部都|都对|都不对|all of the above|none of the above", text, re.I), (
                page,
                quiz["id"],
                text,
            )


def test_the_right_answer_is_not_usually_the_longest() -> None:
    """A reader who always picks the longest option must not pass: it is the right one in at most half the
    single-choice quizzes of the course."""
    single = [(p, q) for p, q in quizzes() if q.get("type", "single") == "single"]
    assert len(single) >= 4
    longest = []
    for page, quiz in single:
        lengths = [len(str(o["text"])) for o in quiz["options"]]
        right = next(i for i, o in enumerate(quiz["options"]) if o.get("correct"))
        if all(lengths[right] > n for i, n in enumerate(lengths) if i != right):
            longest.append(f"{page}:{quiz['id']}")
    assert 2 * len(longest) <= len(single), f"{len(longest)} of {len(single)}: {longest}"


def test_module_05_checks_what_its_recap_claims() -> None:
    ids = {q["id"] for page, q in quizzes() if page == "module-05-attention.md"}
    assert {"qkv-origin", "head-shapes", "head-width", "mask-before-softmax", "why-sqrt-dk", "why-causal-mask"} <= ids
