"""Shown percentages of a row that sums to 1 add up to exactly 100 (largest-remainder rounding), in the static
fallback tables (builder/widgets/fallback.py `percent_row`) and in the widgets (theme/js/widgets/common.js
`pctRow`, run here in Node on the very data the pages embed): every row of every widget of every page.
The step calculator shows one decimal with equal weights alike (`percent_row_even` / `pctRowEven`): tested here too."""

from __future__ import annotations

import json
import random
import re
import shutil

import pytest

from builder.widgets.fallback import percent_row, percent_row_even
from tests.conftest import ROOT, all_widgets, run_js_module
from tests.plugin_harness import render_snippet

DATA_RE = re.compile(r'<script type="application/json" class="widget-data">(.*?)</script>', re.S)
BLOCK_RE = re.compile(r"```\{widget\} ([a-z-]+)\n(.*?)```", re.S)


def widget_blocks() -> list[tuple[str, str]]:
    """Every widget block of the course, plus every widget kind with its defaults."""
    blocks = [
        (m.group(1), m.group(2))
        for page in sorted((ROOT / "content").glob("*.md"))
        for m in BLOCK_RE.finditer(page.read_text(encoding="utf-8"))
    ]
    return blocks + [(name, "") for name in all_widgets()]


def weight_rows(data) -> list[list[float]]:
    """Every row of every weight matrix in a widget's data (any list of number lists under a `weights` key)."""
    rows = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "weights":
                rows.extend(_matrix_rows(value))
            else:
                rows.extend(weight_rows(value))
    elif isinstance(data, list):
        for item in data:
            rows.extend(weight_rows(item))
    return rows


def _matrix_rows(value) -> list[list[float]]:
    if isinstance(value, dict):
        return [r for v in value.values() for r in _matrix_rows(v)]
    if value and all(isinstance(x, (int, float)) for x in value):
        return [value]
    return [r for v in value for r in _matrix_rows(v)]


def rendered(name: str, body: str) -> tuple[str, dict]:
    html, problems = render_snippet(f"```{{widget}} {name}\n{body}```\n")
    assert problems == []
    return html, json.loads(DATA_RE.search(html).group(1))


CASES = widget_blocks()
NO_PERCENT_ROWS = {
    "activation-plot",
    "linear-collapse",
    "ffn-gate",
    "kv-cache",
}  # curves, counts and bytes: no softmax row to show
# Widgets that show no attention weights (module 06: parameter counts, position encodings, next-token
# probabilities, which are a top ten and the rest, shown with one decimal rather than as whole percents).
NO_WEIGHT_ROWS = {"param-count", "positional-encoding", "next-token"}


def test_percent_row_is_largest_remainder() -> None:
    assert percent_row([1 / 3] * 3) == [34, 33, 33]  # ties go to the leftmost
    assert percent_row([0.125, 0.125, 0.25, 0.5]) == [13, 12, 25, 50]
    assert percent_row([0.004, 0.006, 0.99]) == [0, 1, 99]
    assert percent_row([0.0, 0.0, 1.0]) == [0, 0, 100]
    assert sum(percent_row([0.245, 0.245, 0.245, 0.265])) == 100  # plain rounding would give 24×3 + 27 = 99


@pytest.mark.parametrize("name,body", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_every_row_of_every_widget_sums_to_100(name: str, body: str) -> None:
    html, data = rendered(name, body)
    rows = weight_rows(data)
    if name == "model-attention":  # whole percentages already (attention_course/smollm2/attention.py)
        shown = [row for s in data["sentences"] if s["matrix"] for row in s["matrix"]]
        assert all(sum(row) == 100 for row in shown)
        assert shown or data["view"] in ("compare", "gallery")  # those read their numbers from tables / the data file
    elif name == "qk-vectors":  # whole percentages already (percent_row over the keys a query can see)
        shown = [row for head in data["heads"] for row in head["percents"]]
        assert shown and all(sum(row) == 100 for row in shown)
    elif name in NO_PERCENT_ROWS:
        assert not rows
    elif name == "generation-tree":  # the top tokens of a whole-vocabulary distribution, then the rest: sums to 1
        rows = [[*p, 1 - sum(p)] for prompt in data["prompts"] for p in prompt["root"]["p"]]
    elif name == "transformer-flow":  # shapes, no weights
        assert not rows
    elif name in NO_WEIGHT_ROWS:
        pass
    elif name in ("bigram", "bigram-mlp"):
        # module 04 shows probabilities, not rows of weights: 16 columns of rows over the 2,002-token vocabulary
        # (a slice, so each shown row sums to less than 1) and single percentages; no row is rounded to add up
        assert not rows
        assert all(0 < sum(row) < 1 for row in data.get("probs", []))
    # any other kind (a new one included): whatever weight rows it carries are checked below
    for row in rows:
        assert abs(sum(row) - 1) < 1e-5
        shown = percent_row(row)
        assert sum(shown) == 100, (row, shown)
        assert all(abs(p - 100 * w) < 1 for p, w in zip(shown, row))
    # The static fallback: every heat-table row of weights (a table of scores says `heat-scores`, e.g. the head
    # gallery's) and every bar list.
    tables = re.findall(r'<table class="heat-table heat-static(?! heat-scores).*?</table>', html, re.S)
    for table in tables * (name != "bigram"):
        for tr in re.findall(r"<tbody>(.*?)</tbody>", table, re.S)[0].split("</tr>")[:-1]:
            cells = re.findall(r"<td(?![^>]*heat-sum)[^>]*>([^<]*)</td>", tr)
            assert sum(0 if c in ("—", "") else int(c) for c in cells) == 100, tr  # "": a masked run (colspan)
    for bars in re.findall(r'<ol class="bars".*?</ol>', html, re.S):
        assert sum(int(v) for v in re.findall(r'<span class="bar-value">(\d+)%</span>', bars)) == 100
    for table in re.findall(r"<table class=\"num-table\"><caption>不同温度.*?</table>", html, re.S):
        for tr in re.findall(r"<tr><th scope=\"row\">.*?</tr>", table):
            assert sum(int(v) for v in re.findall(r"<td>(\d+)</td>", tr)) == 100, tr
    step = re.findall(r"<td>(\d+\.\d)%</td><td>\[", html)
    if name == "step-calculator":  # one decimal; these rows have no equal weights that cannot share the last 0.1
        assert len(step) == len(data["tokens"]) and sum(round(float(v) * 10) for v in step) == 1000
        assert "step-total" not in html


def test_the_search_finds_the_weight_rows_of_the_designed_widgets() -> None:
    """The guard of the test above: the designed attention widgets' rows are found (five kinds or more carry some)."""
    with_rows = {name for name, body in CASES if weight_rows(rendered(name, body)[1])}
    assert len(with_rows) >= 5, with_rows


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node")
def test_the_widgets_round_every_row_exactly_like_the_fallback(tmp_path) -> None:
    rows = [row for name, body in CASES for row in weight_rows(rendered(name, body)[1])]
    script = (
        "import { pctRow } from './common.mjs'; import { readFileSync } from 'node:fs';"
        "const rows = JSON.parse(readFileSync('data.json', 'utf8'));"
        "process.stdout.write(JSON.stringify(rows.map(pctRow)));"
    )
    out = run_js_module(tmp_path, {"common.mjs": ROOT / "theme" / "js" / "widgets" / "common.js"}, script, rows)
    assert out == [percent_row(row) for row in rows]
    assert all(sum(r) == 100 for r in out)


def steps(shown: list[str]) -> list[int]:
    return [round(float(x) * 10) for x in shown]


def test_percent_row_even_shows_equal_weights_alike() -> None:
    assert percent_row_even([0.172638, 0.345162, 0.345162, 0.137038]) == ["17.3", "34.5", "34.5", "13.7"]
    assert percent_row([0.172638, 0.345162, 0.345162, 0.137038]) == [17, 35, 34, 14]  # what it replaces: 35 ≠ 34
    assert percent_row_even([1 / 3] * 3) == ["33.3"] * 3  # 99.9: no way to share the last 0.1 fairly
    assert percent_row_even([1 / 7] * 7 + [0.0] * 3) == ["14.3"] * 7 + ["0.0"] * 3  # 100.1 is nearer than 99.4
    assert percent_row_even([0.0, 0.0, 1.0]) == ["0.0", "0.0", "100.0"]
    assert percent_row_even([0.125] * 8) == ["12.5"] * 8
    assert percent_row_even([0.1, 0.2, 0.7]) == ["10.0", "20.0", "70.0"]
    assert percent_row_even([0.2454, 0.2454, 0.5092]) == ["24.5", "24.5", "51.0"]  # the pair cannot share one step
    assert percent_row_even([0.25, 0.25, 0.5], 0) == ["25", "25", "50"]
    assert percent_row_even([0.2, 0.2 + 1e-12, 0.6]) == ["20.0", "20.0", "60.0"]  # equal up to floating point


def random_rows(n: int = 400) -> list[list[float]]:
    """Softmax rows of 2–12 weights, most with repeated scores (ties are what the rounding must keep)."""
    rng = random.Random(20240532)
    rows = []
    for _ in range(n):
        pool = [rng.gauss(0, 2) for _ in range(rng.randint(1, 6))]
        scores = [rng.choice(pool) for _ in range(rng.randint(2, 12))]
        exp = [2.718281828459045**s for s in scores]
        rows.append([e / sum(exp) for e in exp])
    return rows


def test_percent_row_even_keeps_ties_and_adds_up_when_it_can() -> None:
    for row in random_rows():
        shown = steps(percent_row_even(row))
        for j, w in enumerate(row):
            assert abs(shown[j] - 1000 * w) < 1, (row, shown)  # each figure within 0.1 of its weight
            for k in range(j):
                if row[k] == row[j]:
                    assert shown[k] == shown[j], (row, shown)  # equal weights, equal figures
        if len(set(row)) == len(row):  # no ties: plain largest remainder, the row adds up to 100.0
            assert sum(shown) == 1000, (row, shown)
        else:  # off only when equal weights cannot share the last steps, and then by less than half of such a set
            assert abs(sum(shown) - 1000) <= max(row.count(w) for w in row) // 2, (row, shown)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node")
def test_the_step_calculator_rounds_like_its_fallback(tmp_path) -> None:
    """pctRowEven (common.js) equals percent_row_even on random rows with ties and on the step calculator's rows as
    embedded; the widget's note for a row that cannot add up (totalNote) is the fallback's (total_note)."""
    from attention_course.widgets.step_calculator.widget import total_note

    _, data = rendered("step-calculator", "")
    rows = random_rows() + data["weights"]
    step_js = (ROOT / "attention_course" / "widgets" / "step_calculator" / "widget.js").read_text(encoding="utf-8")
    (tmp_path / "step.mjs").write_text(step_js.replace("@theme/widgets/common.js", "./common.mjs"), encoding="utf-8")
    script = (
        "import { pctRowEven } from './common.mjs'; import { shownWeights, totalNote } from './step.mjs';"
        "import { readFileSync } from 'node:fs';"
        "const rows = JSON.parse(readFileSync('data.json', 'utf8'));"
        "process.stdout.write(JSON.stringify(rows.map((r) => [pctRowEven(r), totalNote(r, shownWeights(r))])));"
    )
    out = run_js_module(tmp_path, {"common.mjs": ROOT / "theme" / "js" / "widgets" / "common.js"}, script, rows)
    assert [shown for shown, _ in out] == [percent_row_even(row) for row in rows]
    assert [why for _, why in out] == [total_note(row, percent_row_even(row)) for row in rows]
    assert any(why for _, why in out) and not any(why for _, why in out[-len(data["weights"]) :])
