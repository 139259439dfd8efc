"""Issue 32, what each page must keep saying, checked on the Markdown (pages added later included):

* a module page that opens with questions closes with a recap (`{#recap}`, after its quizzes) that repeats each
  question and answers it (point 12);
* the index's 你将学到什么 covers every module page, and no page promises 即将推出 when none is planned (point 16);
* the history, the cost and the honest limits (points 6, 7): attention predates the Transformer (Bahdanau 2014,
  Luong 2015), its cost grows with the square of the length, the attention-as-explanation debate cites both
  sides, and the explainer's bidirectional demos are said to be so;
* √d_k is shown by a cell, not only asserted (point 13).
"""

from __future__ import annotations

import re

import pytest
import yaml

from tests.course.learner_text import CONTENT, PAGES, front_matter, page_text


def plain(text: str) -> str:
    return re.sub(r"\*\*|\s+", "", text)


def opening_questions(body: str) -> list[str]:
    intro = body.split("\n## ", 1)[0]
    bullets = [m.group(1) for m in re.finditer(r"^- (.+？)\s*$", intro, re.M)]
    bold = [m.group(1) for m in re.finditer(r"\*\*([^*]+？)\*\*", intro)]
    return bullets + bold


MODULES = [p for p in PAGES if front_matter(p)[0].get("kind") == "module"]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_a_module_that_opens_with_questions_answers_them_in_a_recap(path) -> None:
    _, body = front_matter(path)
    questions = opening_questions(body)
    if not questions:
        return
    heads = [(m.start(), m.group(0)) for m in re.finditer(r"^## .*$", body, re.M)]
    recap = next((i for i, (_, h) in enumerate(heads) if h.endswith("{#recap}")), None)
    assert recap is not None, f"{path.name} opens with questions but has no recap section ({{#recap}})"
    quiz = next(i for i, (_, h) in enumerate(heads) if h.endswith("{#quiz}"))
    assert recap > quiz, f"{path.name}: the recap closes the page, after the quizzes"
    start = heads[recap][0]
    end = heads[recap + 1][0] if recap + 1 < len(heads) else len(body)
    section = plain(body[start:end])
    for q in questions:
        assert plain(q) in section, f"{path.name}: the recap does not take up '{q}'"


def test_the_index_covers_every_module_and_promises_nothing() -> None:
    meta_index, index = front_matter(CONTENT / "index.md")
    learn = index.split("## 你将学到什么", 1)[1].split("\n## ", 1)[0]
    for path in MODULES:
        number = front_matter(path)[0]["module"]
        assert f"模块 {number:02d}" in learn, f"你将学到什么 leaves out module {number:02d}"
    assert "图解" in learn  # the explainers too
    planned = yaml.safe_load((CONTENT / "site.yml").read_text(encoding="utf-8")).get("planned") or []
    if not planned:
        assert "即将推出" not in index and "即将推出" not in str(meta_index)


def text_of(name: str) -> str:
    return page_text(CONTENT / name)


def test_attention_began_before_the_transformer_and_costs_the_square_of_the_length() -> None:
    for name in ("module-05-attention.md", "attention-explained.md"):
        text = text_of(name)
        assert "Bahdanau" in text and "Luong" in text and "2014" in text and "2015" in text, name
        assert "循环" in text, f"{name}: say that what 2017 dropped was recurrence"
        assert re.search(r"L \\times L", text) and "平方" in text, f"{name}: the L × L cost"


def test_attention_as_explanation_is_a_debate_with_both_sides_cited() -> None:
    body = front_matter(CONTENT / "module-05-attention.md")[1]
    assert "arxiv.org/abs/1902.10186" in body and "arxiv.org/abs/1908.04626" in body  # both papers, linked
    section = body.split("{#not-understanding}", 1)[1].split("\n## ", 1)[0]
    assert "Jain" in section and "Wiegreffe" in section and "争论" in section


def test_the_explainers_bidirectional_demos_say_so() -> None:
    body = front_matter(CONTENT / "attention-explained.md")[1]
    for widget in ("query-focus", "step-calculator"):
        block = body.split(f"```{{widget}} {widget}", 1)
        before, after = block[0][-1500:], block[1][:1500]
        assert re.search(r"没有因果遮罩|双向", before + after), f"say that the {widget} demo sees the whole sentence"


def test_the_scaling_is_shown_by_a_cell() -> None:
    body = front_matter(CONTENT / "module-05-attention.md")[1]
    section = body.split("### 4.2", 1)[1].split("### 4.3", 1)[0]
    cell = re.search(r"```\{code-cell\} python\n(.*?)```", section, re.S).group(1)
    assert "(4, 64, 512)" in cell and "np.sqrt(dk)" in cell and "std" in cell and "max" in cell
