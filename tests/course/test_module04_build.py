"""Module 04's widgets at build time: bad options name path:line (a small page of the course); the real course's page
(the run's shared build) quotes the numbers of the corpus data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT, BuildFailed, build

# the course and its page kinds, as content/site.yml declares them; the pages below say `kind: explainer`
SITE_YML = (
    "series: 测试系列\ntitle: 测试课程\ncourse: attention_course\nkinds:\n"
    "  module: {title: 课程模块, label: 模块, numbered: true}\n  explainer: {title: 图解专题}\n"
)
PAGE_HEAD = "---\ntitle: 语言模型\nkind: explainer\n---\n"


def problems_of(content: Path, out: Path) -> list[str]:
    with pytest.raises(BuildFailed) as info:
        build(content, out, cache_dir=None)
    return [str(p) for p in info.value.problems.sorted()]


def test_bigram_widget_option_errors_name_the_line(make_content, tmp_path):
    make_content("site.yml", SITE_YML)
    make_content(
        "lm.md",
        PAGE_HEAD + "```{widget} bigram\nchar: 龘\n```\n"  # line 6: not a heatmap character (known only from the data)
        "\n```{widget} bigram\nchar: 山水\nseed: -1\n```\n"  # lines 10, 11: two characters; seed below 0
        "\n```{widget} bigram\ntemperature: 5\nview: table\n```\n"  # lines 15, 16
        "\n```{widget} bigram-mlp\nparts:\n  - curves\n  - loss\n```\n",
    )  # line 22: the unknown item
    problems = problems_of(make_content.dir, tmp_path / "site")
    rel = str(make_content.dir / "lm.md")
    text = "\n".join(problems)
    assert any(p.startswith(f"{rel}:6: option 'char' must be one of the heatmap's characters") for p in problems), text
    assert any(p.startswith(f"{rel}:10: option 'char' must be one character, got '山水'") for p in problems), text
    assert any(p.startswith(f"{rel}:11: option 'seed' must be between 0 and") for p in problems), text
    assert any(p.startswith(f"{rel}:15: option 'temperature' must be between 0.2 and 2, got 5") for p in problems), text
    assert any(p.startswith(f"{rel}:16: option 'view' must be one of probability, count") for p in problems), text
    assert any(p.startswith(f"{rel}:22: option 'parts': unknown part 'loss'") for p in problems), text
    assert len(problems) == 6, text


def test_unknown_fact_is_an_error_at_its_line(make_content, tmp_path):
    make_content("site.yml", SITE_YML)
    make_content("lm.md", PAGE_HEAD + "```{widget} bigram\n```\n\n困惑度是 {data}`bigram no_such_fact`。\n")
    problems = problems_of(make_content.dir, tmp_path / "site")
    assert len(problems) == 1 and ":8: {data}`bigram no_such_fact`: no number called 'no_such_fact'" in problems[0]


def test_module04_page_quotes_the_data(course_site):
    from attention_course.poems import ngram_lm
    from builder.model import BuildOptions

    out = course_site
    html = (out / "module-04-bigram-mlp.html").read_text(encoding="utf-8")
    facts = ngram_lm.results(BuildOptions(root=ROOT, cache_dir=None))["facts"]
    quotes = re.findall(r'<span class="widget-quote">([^<]*)</span>', html)
    # the perplexities of the table and the corpus sizes are the computed ones, not typed
    for key in ("bigram_held_ppl", "unigram_held_ppl", "uniform_ppl", "mlp_held_ppl", "poems_total", "worked_p1"):
        assert facts[key] in quotes, key
    # the widget's embedded data: 16 heatmap characters, starting with the boundary and the two marks
    data = json.loads(
        re.search(
            r'data-widget="bigram".*?<script type="application/json" class="widget-data">(.*?)</script>', html, re.S
        ).group(1)
    )
    assert data["chars"][:3] == ["◆", "，", "。"] and len(data["chars"]) == 16
    heat_script = (out / data["heat"]["data"]).read_text(encoding="utf-8")
    heat = json.loads(
        heat_script[heat_script.index("=", heat_script.index(f"d{data['heat']['key']}")) + 1 :].rstrip().rstrip(";")
    )
    for row in heat["probs"]:  # shown columns are part of a row that sums to 1
        assert 0 < sum(row) <= 1 + 1e-9
    sampler = out / data["data"]
    assert sampler.is_file()
    assert sampler.read_text(encoding="utf-8").startswith("((self.Course=self.Course||{}).bigram=")


def test_stale_weights_are_a_widget_error_at_the_fence(make_content, tmp_path, monkeypatch):
    """Committed weights that no longer match the code (artifacts.StaleWeights) stop the build with the fix named at
    each widget's line, not with a traceback."""
    from attention_course.poems import artifacts, lm_table, ngram_lm, transformer_lm

    def stale(*_args, **_kwargs):
        raise artifacts.StaleWeights("weights/mlp.json: the mlp weights are stale; fix: run `python -m …`")

    for module in (ngram_lm, transformer_lm, lm_table):
        monkeypatch.setattr(module, "results", stale)
    monkeypatch.setattr(transformer_lm, "load", stale)
    make_content("site.yml", SITE_YML)
    make_content(
        "lm.md",
        PAGE_HEAD + "```{widget} bigram\n```\n\n```{widget} bigram-mlp\nparts: [samples]\n```\n"
        "\n```{widget} poem-models\nparts: [table]\n```\n\n```{widget} poem-writer\n```\n",
    )
    problems = problems_of(make_content.dir, tmp_path / "site")
    rel = str(make_content.dir / "lm.md")
    assert [p.split(": ", 1)[0] for p in problems] == [f"{rel}:{n}" for n in (5, 8, 12, 16)], problems
    assert all("weights" in p and "fix: run" in p for p in problems), problems
