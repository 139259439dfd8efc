"""The prose is the course's own wording (issue 18, point 7): the runs that still followed a seed document are
rewritten, and — where the seed documents are at hand — no run of 15 or more characters of the explainer's
sections 九 and 十二 is shared with them (runs that are mostly a Latin term, like 多头注意力（Multi-Head
Attention）, are names, not wording)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT

EXPLAINER = ROOT / "content" / "attention-explained.md"
SEEDS = Path("/work/shared/seeds")


def section(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def test_the_two_seed_runs_are_gone() -> None:
    text = EXPLAINER.read_text(encoding="utf-8")
    assert "头数越多，模型能同时捕捉的关系类型" not in text
    assert "动态加权平均：按相关度融合所有词的信息" not in text


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seed documents are not on this machine")
def test_no_long_run_of_sections_nine_and_twelve_follows_a_seed() -> None:
    seeds = "".join(p.read_text(encoding="utf-8", errors="ignore") for p in sorted(SEEDS.iterdir()) if p.is_file())
    grams = {seeds[i : i + 15] for i in range(len(seeds) - 14)}
    text = EXPLAINER.read_text(encoding="utf-8")
    for part in (section(text, "## 九、", "```{quiz}"), section(text, "## 十二、", "**配套阅读**")):
        prose = [line for line in part.splitlines() if not line.startswith(("#", "```", "caption:", "$$"))]
        for line in prose:
            line = line.split("|")[2] if line.startswith("|") and line.count("|") >= 3 else line
            shared = [
                g
                for g in (line[i : i + 15] for i in range(len(line) - 14))
                if g in grams and sum(c.isascii() and c.isalpha() for c in g) < 5
            ]  # terms, not prose
            assert not shared, shared[0]
