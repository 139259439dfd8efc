"""The hints of every exercise on every page of content/ (pages added later included) guide before they give: the
hints open one at a time (a failed check opens the first), so every hint before the last names the idea, the formula,
the function to look up or the shape to aim for, and only the last one may hand over the answer. A lone hint opens
on the first failed check, so it gives no answer either.

The checkable form: such a hint holds no *solution line* — a non-blank line of the reference solution, its comment
cut off, that the starter lacks and that is more than a trivial token (more than 8 characters besides spaces) — nor
the expression such a line returns or assigns (`return K @ q / …` without its `return`, `scores = …` without its
`scores =`). Compared with all whitespace removed, anywhere in the hint's Markdown (inline code and code blocks
included). The exercises are read by the engine's own parser (builder/markdown/exercise.py)."""

from __future__ import annotations

import io
import re
import tokenize

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from builder.content import load_page
from builder.errors import Problems
from builder.markdown.exercise import ExerciseBlock, exercise_plugin
from builder.model import ParseContext
from tests.conftest import ROOT
from tests.course.learner_text import PAGES

TRIVIAL = 8  # a line of at most this many non-space characters gives nothing away (`return x`, `pass`)
EXERCISE_FENCE_RE = re.compile(r"^(?:`{3,}|~{3,})\{exercise\}", re.M)
ASSIGNED_RE = re.compile(r"^(?:return\s+|[A-Za-z_][\w, ]*\s*=(?!=)\s*)")


def exercises_of(path) -> list[ExerciseBlock]:
    """The page's exercises as the build parses them (each with its hints' Markdown tokens)."""
    problems = Problems()
    page = load_page(path, ROOT, problems)
    assert page is not None, [str(p) for p in problems.sorted()]
    md = MarkdownIt("commonmark")
    exercise_plugin(md, render=lambda block, env, md: "")
    context = ParseContext(page.rel, page.body_line, problems)
    tokens = md.parse(page.body, context.env())
    assert not problems, [str(p) for p in problems.sorted()]
    blocks = [t.meta["exercise"] for t in tokens if t.type == "exercise"]
    assert len(blocks) == len(EXERCISE_FENCE_RE.findall(page.body)), f"{path.name}: an exercise was not parsed"
    return blocks


EXERCISES = [(path.name, block) for path in PAGES for block in exercises_of(path)]


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def code_lines(code: str) -> list[str]:
    """The code's lines without their comments, stripped; blank ones dropped."""
    lines = code.split("\n")
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT:
            row, col = token.start
            lines[row - 1] = lines[row - 1][:col]
    return [line.strip() for line in lines if line.strip()]


def solution_lines(block: ExerciseBlock) -> list[str]:
    """What a hint must not hold (whitespace removed): each solution line the starter lacks, and what it returns or
    assigns, when longer than a trivial token."""
    starter = {squeeze(line) for line in code_lines(block.exercise.starter)}
    found: list[str] = []
    for line in code_lines(block.exercise.solution):
        if squeeze(line) in starter:
            continue
        for text in (line, ASSIGNED_RE.sub("", line)):
            text = squeeze(text)
            if len(text) > TRIVIAL and text not in found:
                found.append(text)
    return found


def hint_text(tokens: list[Token]) -> str:
    """A hint's Markdown as written: the source of its inline runs (inline code included) and its code blocks."""
    return "\n".join(token.content for token in tokens if token.content)


def test_every_page_s_exercises_are_found() -> None:
    assert len(EXERCISES) >= 12
    for page, block in EXERCISES:
        assert solution_lines(block), f"{page}: exercise '{block.exercise.id}': no solution line to look for"


@pytest.mark.parametrize("page,block", EXERCISES, ids=[f"{p}:{b.exercise.id}" for p, b in EXERCISES])
def test_only_the_last_hint_gives_a_solution_line(page: str, block: ExerciseBlock) -> None:
    guiding = block.hints[:-1] if len(block.hints) > 1 else block.hints
    given = [
        f"hint {number} of {len(block.hints)} holds `{line}`"
        for number, tokens in enumerate(guiding, start=1)
        for line in solution_lines(block)
        if line in squeeze(hint_text(tokens))
    ]
    assert not given, f"{page}: exercise '{block.exercise.id}': " + "; ".join(given)
