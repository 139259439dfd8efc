"""The `training-curve` widget without a browser: its data check (`check_curve`), the static chart (`curve_svg`) and
fallback, the quotes, the build's path (`build_data` with a reference run made up here: the real ones are
attention_course.hands_on.reference_runs'), and widget.js's rules against widget.py's, number for number, in Node.
(The live chart in Chromium: tests/e2e/test_training_curve_widget.py.)"""

from __future__ import annotations

import copy
import math
import re
import sys
import types
import xml.etree.ElementTree as ET

import pytest

from attention_course.widgets.training_curve import widget as tc
from builder.widgets.schema import WidgetDataError
from tests.conftest import ROOT, all_widgets, run_js_module
from tests.plugin_harness import render_snippet

SVG = "{http://www.w3.org/2000/svg}"
FOLDER = ROOT / "attention_course" / "widgets" / "training_curve"


def curve(n: int = 41, step: int = 10) -> dict:
    """A made-up run: two series that fall from about ln 12, every `step` steps."""
    return {
        "title": "重复序列任务的损失",
        "x_label": "训练步数",
        "y_label": "损失（nats）",
        "x_max": 400,
        "series": [
            {"name": "全部位置", "points": [[i * step, 2.48 * math.exp(-i / 15) + 0.3] for i in range(n)]},
            {"name": "可以照抄的位置", "points": [[i * step, 2.49 * math.exp(-i / 6) + 0.01] for i in range(n)]},
        ],
        "references": [{"name": "均匀猜测 ln 12", "value": 2.48}, {"name": "只看前一个字", "value": 1.2}],
        "markers": [{"x": 150, "label": "越过门槛"}],
        "status": "第 400 步 · 损失 0.47 · 用时 9.8 秒",
        "done": True,
        "quotes": {"seconds": "9.8"},
    }


# ------------------------------------------------------------------------------------------------ the check


def test_a_good_curve_passes_and_so_do_the_optional_keys_left_out() -> None:
    tc.check_curve(curve())
    tc.check_curve({"series": [{"name": "损失", "points": []}]})  # a run that has not logged a step yet
    tc.check_curve({"series": [{"name": "损失", "points": [(0, 1), (0, 0.5)]}], "done": None})  # x may repeat


def broken(change) -> dict:
    d = copy.deepcopy(curve())
    change(d)
    return d


BAD = {
    "not a dict": ([1, 2], "must be a dict"),
    "NaN": (broken(lambda d: d["series"][0]["points"].__setitem__(3, [30, float("nan")])), "points[3]"),
    "infinity": (broken(lambda d: d["series"][1]["points"].__setitem__(0, [0, math.inf])), "finite"),
    "bool as a number": (broken(lambda d: d["series"][0]["points"].__setitem__(0, [True, 1.0])), "finite"),
    "a string point": (broken(lambda d: d["series"][0]["points"].__setitem__(0, ["0", 1.0])), "finite"),
    "three numbers": (broken(lambda d: d["series"][0]["points"].__setitem__(0, [0, 1, 2])), "must be [x, y]"),
    "x goes back": (broken(lambda d: d["series"][0]["points"].__setitem__(5, [0, 1.0])), "x goes back"),
    "five series": (
        broken(lambda d: d.__setitem__("series", [{"name": f"s{i}", "points": []} for i in range(5)])),
        "'series' has 5 entries",
    ),
    "no series": (broken(lambda d: d.__setitem__("series", [])), "'series' has 0 entries"),
    "series missing": (broken(lambda d: d.pop("series")), "'series' is missing"),
    "too many points": (
        broken(lambda d: d["series"][0].__setitem__("points", [[i, 1.0] for i in range(tc.MAX_POINTS + 1)])),
        "at most 5000",
    ),
    "points not a list": (broken(lambda d: d["series"][0].__setitem__("points", "1,2")), "'points' must be a list"),
    "a name used twice": (broken(lambda d: d["series"][1].__setitem__("name", "全部位置")), "used twice"),
    "an empty name": (broken(lambda d: d["series"][1].__setitem__("name", " ")), "'name' is empty"),
    "a name not text": (broken(lambda d: d["series"][1].__setitem__("name", 3)), "must be a string"),
    "five references": (broken(lambda d: d["references"].extend(d["references"] * 2)), "'references' has 6"),
    "a reference without value": (broken(lambda d: d["references"][0].pop("value")), "'value' is missing"),
    "a reference NaN": (broken(lambda d: d["references"][0].__setitem__("value", math.nan)), "finite number"),
    "four markers": (broken(lambda d: d.__setitem__("markers", d["markers"] * 4)), "'markers' has 4"),
    "a marker not an object": (broken(lambda d: d.__setitem__("markers", [150])), "markers[0] must be an object"),
    "y_max below y_min": (broken(lambda d: d.update(y_min=2, y_max=1)), "'y_max' (1) must be above 'y_min' (2)"),
    "x_max zero": (broken(lambda d: d.__setitem__("x_max", 0)), "'x_max' must be above 0"),
    "x_max text": (broken(lambda d: d.__setitem__("x_max", "400")), "'x_max' must be a finite number"),
    "done not a bool": (broken(lambda d: d.__setitem__("done", "yes")), "'done' must be true or false"),
    "a long status": (broken(lambda d: d.__setitem__("status", "步" * 201)), "at most 200"),
    "an unknown key": (broken(lambda d: d.__setitem__("serie", [])), "unknown key(s) serie"),
    "quotes not text": (broken(lambda d: d.__setitem__("quotes", {"a": 1})), "'quotes' must map names to texts"),
}


@pytest.mark.parametrize("name", BAD)
def test_the_check_names_what_is_wrong(name: str) -> None:
    data, words = BAD[name]
    with pytest.raises(ValueError) as info:
        tc.check_curve(data)
    assert words in str(info.value), str(info.value)


# ------------------------------------------------------------------------------------------------ the static chart


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def test_the_static_chart_draws_each_series_reference_and_marker() -> None:
    d = curve()
    root = parse(tc.curve_svg(d))
    assert root.get("role") == "img" and root.get("viewBox") == f"0 0 {tc.W} {tc.H}"
    [series] = [g for g in root.iter(f"{SVG}g") if g.get("class") == "tc-series"]
    lines = [p for p in series.iter(f"{SVG}path") if p.get("class") == "tc-line"]
    assert len(lines) == 2  # one path per series
    assert [p.get("stroke-dasharray") for p in lines] == list(tc.DASHES[:2])  # not told apart by colour alone
    # each path has one vertex per point, inside the plot
    for p, s in zip(lines, d["series"]):
        vertices = re.findall(r"[ML]([\d.]+),([\d.]+)", p.get("d"))
        assert len(vertices) == len(s["points"])
        assert all(0 <= float(x) <= tc.W and 0 <= float(y) <= tc.H for x, y in vertices)
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert "均匀猜测 ln 12 = 2.48" in texts and "只看前一个字 = 1.20" in texts
    assert len([ln for ln in root.iter(f"{SVG}line") if ln.get("class") == "tc-ref"]) == 2
    assert "越过门槛" in texts and len([ln for ln in root.iter(f"{SVG}line") if ln.get("class") == "tc-marker"]) == 1
    # the legend: each series with its latest value; the axis labels; ticks on round numbers
    assert "全部位置 0.47" in texts and "可以照抄的位置 0.01" in texts
    assert "训练步数" in texts and "损失（nats）" in texts
    assert {"0", "1", "2", "3"} <= set(texts) and {"0", "100", "200", "300", "400"} <= set(texts)


def test_the_title_and_description_summarise_the_curve() -> None:
    root = parse(tc.curve_svg(curve()))
    assert root.find(f"{SVG}title").text == "重复序列任务的损失"
    desc = root.find(f"{SVG}desc").text
    assert desc == (
        "重复序列任务的损失（训练步数 0 到 400）：全部位置从 2.78 降到 0.47，最低 0.47；可以照抄的位置从 2.50 降到 "
        "0.01，最低 0.01；参考线：均匀猜测 ln 12 为 2.48、只看前一个字 为 1.20。"
    )
    assert desc.count("。") == 1  # one sentence
    empty = {"title": "还没开始", "series": [{"name": "损失", "points": []}]}
    assert tc.summary(empty) == "还没开始：损失还没有数据。"


def test_the_ranges_follow_the_data_or_the_options() -> None:
    assert tc.axes(curve()) == (0, 400, 0, 3)  # x_max fixes x; 0 … a round number above the highest value
    d = curve()
    d.update(x_max=None, y_min=0.5, y_max=2.5)
    assert tc.axes(d) == (0, 400, 0.5, 2.5)
    d = {"series": [{"name": "a", "points": [[0, -0.3], [10, 0.7]]}]}
    assert tc.axes(d) == (0, 10, -0.4, 0.8)  # a value below 0: the axis goes down to a round number under it
    assert tc.axes({"series": [{"name": "a", "points": []}]}) == (0, 1, 0, 1)  # nothing yet: a unit box
    assert tc.nice_step(2.48, 5) == 0.5 and tc.nice_step(400, 5) == 100 and tc.nice_step(3000, 4) == 1000
    assert tc.ticks(0, 1, 0.2) == [0, 0.2, 0.4, 0.6, 0.8, 1.0] and tc.decimals(0.25) == 2


def test_long_series_are_thinned_to_every_kth_point_and_the_last() -> None:
    points = [[i, 1 / (i + 1)] for i in range(3000)]
    kept = tc.thin(points, tc.DRAW_POINTS)
    assert len(kept) <= tc.DRAW_POINTS and kept[0] == points[0] and kept[-1] == points[-1]
    assert kept[1][0] == 20  # every 20th step: the smallest round k that keeps ≤ DRAW_POINTS (200) points
    d = {"series": [{"name": "a", "points": points}, {"name": "b", "points": points[::2]}]}
    root = parse(tc.curve_svg(d))
    for p in (p for p in root.iter(f"{SVG}path") if p.get("class") == "tc-line" and len(p.get("d")) > 40):
        assert p.get("d").count("L") + 1 <= tc.DRAW_POINTS
    rows = tc.table_rows(d)
    assert len(rows) <= tc.TABLE_ROWS and rows[0][0] == 0 and rows[-1][0] == 2999
    assert [x for x, _ in rows[:3]] == [0, 500, 1000]  # round steps
    assert rows[1][1] == [points[500][1], points[500][1]] and rows[-1][1] == [points[-1][1], None]  # b: no x 2999


def test_the_fallback_is_a_table_and_the_references_escaped() -> None:
    d = curve()
    d["series"][0]["name"] = "<b>全部</b>"
    html = tc.fallback(d)
    assert "<svg" not in html and "<b>" not in html and "&lt;b&gt;全部&lt;/b&gt;" in html
    [table] = re.findall(r"<table.*?</table>", html, re.S)
    assert len(re.findall(r"<tr><th scope=\"row\">", table)) <= tc.TABLE_ROWS
    assert '<th scope="row">400</th><td>0.47</td><td>0.01</td>' in table
    assert "参考线：均匀猜测 ln 12 = 2.48；只看前一个字 = 1.20。标记：150 处 越过门槛。" in html
    assert "第 400 步 · 损失 0.47 · 用时 9.8 秒" in html
    assert ' id="' not in html  # no ids: a page may show several, and print keeps a copy


# ------------------------------------------------------------------------------------------------ quotes


def test_quotes() -> None:
    d = curve()
    assert tc.quote(d, [], "last:全部位置") == "0.47"
    assert tc.quote(d, [], "first:可以照抄的位置") == "2.50"
    assert tc.quote(d, [], "min:可以照抄的位置") == "0.01"
    assert tc.quote(d, ["ref:均匀猜测", "ln"], "12") == "2.48"  # a name with spaces: the words joined again
    assert tc.quote(d, [], "steps") == "400"
    assert tc.quote(d, [], "seconds") == "9.8"  # the data's own quotes
    for spec, words in (("last:全部", "no series called '全部'"), ("speed", "no number called 'speed'")):
        with pytest.raises(ValueError, match=words):
            tc.quote(d, [], spec)
    with pytest.raises(ValueError, match="has no points"):
        tc.quote({"series": [{"name": "a", "points": []}]}, [], "last:a")


# ------------------------------------------------------------------------------------------------ the build


@pytest.fixture
def runs(monkeypatch):
    """A made-up attention_course.hands_on.reference_runs (only `induction` is known), in place of the real one."""
    module = types.ModuleType("attention_course.hands_on.reference_runs")
    module.calls = []

    def reference_curve(name, build):
        module.calls.append(name)
        if name == "broken":
            return {**curve(), "series": []}
        if name != "induction":
            raise KeyError(f"no reference run called {name!r}")
        return curve()

    module.reference_curve = reference_curve
    monkeypatch.setitem(sys.modules, "attention_course.hands_on.reference_runs", module)
    return module


def test_build_data_reads_the_reference_run_and_checks_it(runs) -> None:
    widget = all_widgets()["training-curve"]
    options = {**widget.defaults(), "run": "induction"}
    data, files = widget.build_data(options, None)
    assert data == curve() and files == {}
    data, _ = widget.build_data({**options, "title": "另一个标题"}, None)
    assert data["title"] == "另一个标题"
    with pytest.raises(WidgetDataError, match="run 'copy': no reference run called 'copy'$") as info:
        widget.build_data({**options, "run": "copy"}, None)
    assert info.value.option == "run"
    with pytest.raises(WidgetDataError, match="gives a bad curve: 'series' has 0 entries"):
        widget.build_data({**options, "run": "broken"}, None)
    assert widget.defaults() == {"run": "induction", "title": None}


def test_a_page_shows_the_run_and_quotes_it(runs) -> None:
    html, problems = render_snippet(
        "```{widget} training-curve\nrun: induction\n```\n\n"
        "训练 {data}`training-curve steps` 步后，"
        "可以照抄的位置的损失降到 {data}`training-curve last:可以照抄的位置`。\n"
    )
    assert problems == []
    quoted = '<span class="widget-quote">{}</span>'
    assert f"训练 {quoted.format(400)} 步后，可以照抄的位置的损失降到 {quoted.format('0.01')}。" in html
    assert 'data-widget="training-curve"' in html and 'class="tc-title"' in html
    html, problems = render_snippet("```{widget} training-curve\nrun: nothing\n```\n")
    assert problems == ["content/test.md:2: run 'nothing': no reference run called 'nothing' [widget]"]
    html, problems = render_snippet("```{widget} training-curve\ntitle: 另一个标题\n```\n")  # run: induction
    assert problems == [] and runs.calls[-1] == "induction" and '<p class="tc-title">另一个标题</p>' in html


# ------------------------------------------------------------------------------------------------ widget.js = widget.py


def finite_or_null(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: finite_or_null(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [finite_or_null(x) for x in v]
    return v


JS_RULES = """
import { axes, thin, tableRows, summary, problemOf, niceStep, ticks, decimals, xText, markerRows, labelPositions,
  shapePath } from "./widget.mjs";
import { readFileSync } from "node:fs";
const cases = JSON.parse(readFileSync("./data.json", "utf8"));
const out = cases.good.map((d) => ({ axes: axes(d), thin: d.series.map((s) => thin(s.points, 600)),
  rows: tableRows(d), summary: summary(d), problem: problemOf(d) }));
const bad = cases.bad.map((d) => problemOf(d));
const steps = cases.spans.map(([span, count]) => {
  const s = niceStep(span, count);
  return [s, ticks(0, span, s), decimals(s)];
});
const xs = cases.xs.map(xText);
const marks = cases.marks.map(([xs, labels]) => markerRows(xs, labels, 620, 13));
const labels = cases.labels.map((ys) => labelPositions(ys, 40, 230, 16));
const shapes = ["circle", "square", "triangle", "diamond"].map((k) => shapePath(k, 100.37, 50));
process.stdout.write(JSON.stringify({ out, bad, steps, xs, marks, labels, shapes }));
"""


def test_widget_js_follows_the_same_rules(tmp_path) -> None:
    long = {"series": [{"name": "a", "points": [[i, math.sin(i) + 2] for i in range(2999)]}], "x_max": 3000}
    good = [
        curve(),
        curve(n=3001, step=1),
        long,
        {"series": [{"name": "a", "points": [[0, -0.3], [10, 0.7]]}], "y_max": 1.0},
        {"title": "空", "series": [{"name": "a", "points": []}, {"name": "b", "points": [[0.5, 1.255]]}]},
    ]
    lenient = ("an unknown key", "quotes not text")  # widget.js lets these pass
    bad = [BAD[name][0] for name in BAD if name not in lenient]
    bad = [finite_or_null(d) for d in bad]  # JSON has no NaN or ∞: a page never receives them
    spans = [[2.48, 5], [400, 5], [3000, 4], [0.037, 5], [12345, 7], [1, 5]]
    xs = [0, 12, 2.5, 0.125, 1234.567]
    marks = [[[100, 110, 600], ["开始", "越过门槛", "最后一个标记"]], [[50, 300], ["a", "b"]], [[], []]]
    labels = [[100, 95, 230, 20], [], [229, 230, 231]]
    result = run_js_module(
        tmp_path,
        {"widget.mjs": FOLDER / "widget.js", "common.js": ROOT / "theme" / "js" / "widgets" / "common.js"},
        JS_RULES,
        {"good": good, "bad": bad, "spans": spans, "xs": xs, "marks": marks, "labels": labels},
    )
    for d, js in zip(good, result["out"]):
        tc.check_curve(d)
        assert js["problem"] is None
        assert js["axes"] == pytest.approx(list(tc.axes(d)))
        assert js["thin"] == [[list(p) for p in tc.thin(s["points"], 600)] for s in d["series"]]
        assert js["rows"] == [[x, values] for x, values in tc.table_rows(d)]
        assert js["summary"] == tc.summary(d)
    assert all(isinstance(p, str) and p for p in result["bad"]), result["bad"]
    for (span, count), (step, tick_list, dec) in zip(spans, result["steps"]):
        assert step == tc.nice_step(span, count) and tick_list == tc.ticks(0, span, step) and dec == tc.decimals(step)
    assert result["xs"] == [tc.x_text(x) for x in xs]
    assert result["marks"] == [[list(m) for m in tc.marker_rows(a, b, 620, 13)] for a, b in marks]
    assert result["labels"] == [tc.label_positions(ys, 40, 230, 16) for ys in labels]
    assert result["shapes"] == [tc.shape_path(k, 100.37, 50) for k in tc.SHAPES]
    assert result["marks"][0] == [[105, False, 0], [115, False, 1], [595, True, 0]]  # close labels: two rows
