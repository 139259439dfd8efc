"""Widgets: option checking (fixture file tests/course/fixtures/widget.md), build-time data checked against
attention_core, the embedded JSON, and bad input through a real build."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from attention_core import (
    causal_mask,
    get_example,
    multi_head_attention,
    multi_head_trace,
    scaled_dot_product_attention,
    softmax,
)
from builder.errors import Code
from builder.output import MARKER, MARKER_TEXT
from builder.widgets.fallback import embed_json, percent_row, round_significant
from tests.conftest import BuildFailed, all_widgets, build
from tests.plugin_harness import render_page, render_snippet

DATA_RE = re.compile(r'<script type="application/json" class="widget-data">(.*?)</script>', re.S)


# --------------------------------------------------------------------------- data vs attention_core


def embedded(source: str) -> list[dict]:
    out, problems = render_snippet(source)
    assert problems == []
    return [json.loads(m) for m in DATA_RE.findall(out)]


def widget_data(name: str, body: str = "") -> tuple[dict, dict]:
    """(unrounded data from compute, data parsed back out of the rendered page)."""
    [page] = embedded(f"```{{widget}} {name}\n{body}```\n")
    import yaml

    options = {**all_widgets()[name].defaults(), **(yaml.safe_load(body) or {})}
    return all_widgets()[name].compute(options), page


def close(a, b, tol: float) -> bool:
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=tol, atol=tol)


def projections(ex):
    return ex.X @ ex.W_Q, ex.X @ ex.W_K, ex.X @ ex.W_V


def test_heatmap_data_is_attention_core_with_and_without_mask() -> None:
    raw, page = widget_data("heatmap", "examples: [cat-fast, animal-tired, animal-wide]\nmask: none\n")
    assert page["mask"] == "none"
    assert [e["id"] for e in page["examples"]] == ["cat-fast", "animal-tired", "animal-wide"]
    for data, tol in ((raw, 1e-9), (page, 1e-6)):
        for shown in data["examples"]:
            ex = get_example(shown["id"])
            q, k, v = projections(ex)
            _, causal = scaled_dot_product_attention(q, k, v, mask=causal_mask(ex.length))
            _, full = scaled_dot_product_attention(q, k, v)
            assert shown["tokens"] == list(ex.tokens)
            assert close(shown["weights"]["causal"], causal, tol)
            assert close(shown["weights"]["none"], full, tol)
            assert close(shown["row_sums"]["causal"], np.ones(ex.length), tol)
            assert "示意" in shown["note"]


def test_query_focus_data_and_default_query_is_the_pronoun() -> None:
    raw, page = widget_data("query-focus")
    ex = get_example("xiaoming")
    _, weights = scaled_dot_product_attention(*projections(ex), mask=causal_mask(ex.length) if ex.causal else None)
    assert page["tokens"][page["query"]] == "他"
    assert close(raw["weights"], weights, 1e-9) and close(page["weights"], weights, 1e-6)
    _, other = widget_data("query-focus", "query: 小红\n")
    assert other["tokens"][other["query"]] == "小红"


def test_step_calculator_data_follows_every_step() -> None:
    raw, page = widget_data("step-calculator", "query: 2\n")
    ex = get_example("four-words")
    q, k, v = projections(ex)
    output, weights = scaled_dot_product_attention(q, k, v)
    scores = q @ k.T
    for data, tol in ((raw, 1e-9), (page, 1e-6)):
        assert data["query"] == 2 and data["d_k"] == 3
        assert close(data["Q"], q, tol) and close(data["K"], k, tol) and close(data["V"], v, tol)
        assert close(data["scores"], scores, tol)
        assert close(data["scaled"], scores / math.sqrt(3), tol)
        assert close(data["weights"], weights, tol) and close(data["output"], output, tol)
        # the displayed intermediate numbers are consistent with the displayed results
        assert close(np.asarray(data["exp"]) / np.asarray(data["exp_sum"])[:, None], weights, tol)
        assert close(np.asarray(data["contributions"]).sum(axis=1), output, tol)


def test_temperature_data_covers_the_whole_grid() -> None:
    raw, page = widget_data("temperature", "min: 0.2\nmax: 4\nstep: 0.1\nvalue: 1\n")
    ex = get_example("temperature-scores")
    grid = np.linspace(0.2, 4.0, 39)
    assert len(page["temperatures"]) == 39 and close(page["temperatures"], grid, 1e-12)
    assert page["temperatures"][page["value_index"]] == 1.0
    expected = np.array([softmax(ex.scores, temperature=t) for t in grid])
    entropy = -(expected * np.log2(expected)).sum(axis=1)
    for data, tol in ((raw, 1e-9), (page, 1e-6)):
        assert close(data["weights"], expected, tol)
        assert close(data["max_weight"], expected.max(axis=1), tol)
        assert close(data["entropy_bits"], entropy, tol)
        assert close(data["max_entropy_bits"], np.log2(ex.length), tol)
    # low temperature concentrates, high temperature spreads out
    assert page["entropy_bits"][0] < page["entropy_bits"][-1]


def test_multi_head_data_is_the_multi_head_trace() -> None:
    raw, page = widget_data("multi-head")
    ex = get_example("multi-head")
    mask = causal_mask(ex.length) if ex.causal else None
    output, weights = multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, ex.num_heads, mask=mask)
    trace = multi_head_trace(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, ex.num_heads, mask=mask)
    for data, tol in ((raw, 1e-9), (page, 1e-6)):
        assert data["num_heads"] == 3 and data["head_labels"] == list(ex.head_labels)
        assert close(data["weights"], weights, tol)
        assert close(data["concat"], trace.concat, tol)
        assert close(data["output"], output, tol)


# --------------------------------------------------------------------------- embedding


def test_embedded_json_is_rounded_and_cannot_close_the_script() -> None:
    text = embed_json({"t": "</script><!-- 他", "x": 0.123456789, "big": 12345.6789012})
    assert "</" not in text and "<!--" not in text and "他" in text  # ensure_ascii=False keeps Chinese
    back = json.loads(text)
    assert back == {"t": "</script><!-- 他", "x": 0.123457, "big": 12345.678901}
    assert round_significant([1e-12, -2.5e-7, float("inf")]) == [1e-12, -2.5e-7, None]
    assert embed_json({"w": [1.0, 0.0, -0.0, 0.5, 2.0000001]}) == '{"w":[1,0,0,0.5,2]}'  # whole numbers as ints


def test_fallback_shows_the_numbers_as_escaped_text_without_javascript() -> None:
    out, problems = render_snippet("```{widget} query-focus\n```\n")
    assert problems == []
    body = out.split('<script type="application/json"')[0]
    ex = get_example("xiaoming")
    _, weights = scaled_dot_product_attention(*projections(ex))
    pronoun = ex.tokens.index("他")
    cells = re.findall(r"<span class=\"bar-value\">(\d+)%</span>", body)
    assert [int(c) for c in cells] == percent_row(weights[pronoun])
    assert "<table" in body and "<caption>" in body


def test_static_heat_table_cells_carry_the_percent_and_the_exact_shade() -> None:
    """Fallback heat cells are bare <td>s of a .heat-static table (theme/css/widgets.css styles them as heat
    cells): the text is the whole percent, --w the weight to 2 decimals written briefly, the ink classes from the
    contrast rule, and a masked cell is a bare "—" (no weight)."""
    from builder.widgets.fallback import css_number, ink_classes, percent_row

    out, problems = render_snippet("```{widget} heatmap\nexamples: [cat-fast]\nmask: causal\n```\n")
    assert problems == []
    body = out.split('<script type="application/json"')[0]
    assert 'class="heat-table heat-static"' in body and "heat-cell" not in body
    weights = get_example("cat-fast").trace(causal=True).weights
    rows = re.findall(r"<tr><th scope=\"row\">[^<]*</th>(.*?)</tr>", body)
    assert len(rows) == len(weights)
    for i, row in enumerate(rows):
        cells = re.findall(r'<td( class="[^"]*")?( style="--w:([^"]*)")?>([^<]*)</td>', row)
        assert len(cells) == len(weights) + 1  # and the row's sum
        for j, (cls, _, shade, text) in enumerate(cells[:-1]):
            if j > i:
                assert (cls, shade, text) == ("", "", "—")
                continue
            w = weights[i][j]
            assert float(shade) == round(w, 2) and shade == css_number(w) and not shade.startswith("0.")
            assert int(text) == percent_row(weights[i])[j]  # a row adds up to 100 (tests/course/test_percent_rows.py)
            assert cls == (f' class="{" ".join(ink_classes(w))}"' if ink_classes(w) else "")
        assert cells[-1][0] == ' class="heat-sum"' and cells[-1][3] == "100%"


def test_css_number_is_the_same_number_written_briefly() -> None:
    from builder.widgets.fallback import css_number

    assert [css_number(x) for x in (0.12, 1.0, 0.0, 0.004, 0.996, 0.1296, -0.5, -0.001)] == [
        ".12",
        "1",
        "0",
        "0",
        "1",
        ".13",
        "-.5",
        "0",
    ]
    assert css_number(12.3456, 3) == "12.346" and css_number(50.0, 3) == "50" and css_number(0.1296, 4) == ".1296"


def test_page_env_gets_the_feature_and_the_widget_ids() -> None:
    _, _, facts = render_page("```{widget} temperature\n```\n\n```{widget} multi-head\n```\n")
    assert "widgets" in facts.features and {"widget-1", "widget-2"} <= facts.extra_ids
    _, _, facts2 = render_page("plain text\n")
    assert "widgets" not in facts2.features


# --------------------------------------------------------------------------- a real build


BAD_PAGE = """---
title: 坏组件
---
正文。

```{widget} heatmap
mask: causal
colour: red
```

```{widget} temperature
value: 9
```

```{widget} spinner
```
"""


def test_bad_widgets_fail_the_build_with_lines_and_leave_the_site_untouched(make_content, tmp_path: Path) -> None:
    make_content.use_course("attention_course")
    make_content("bad.md", BAD_PAGE)
    out = tmp_path / "site"
    out.mkdir()
    (out / "previous.html").write_text("old site", encoding="utf-8")
    (out / MARKER).write_bytes(MARKER_TEXT)  # a site a build made: the only kind a build replaces
    with pytest.raises(BuildFailed) as info:
        build(make_content.dir, out, cache_dir=tmp_path / "cache")
    page = str(make_content.dir / "bad.md")  # outside the project the path is absolute
    problems = {str(p) for p in info.value.problems.items if p.code == Code.WIDGET}
    assert problems == {
        f"{page}:{rest}"
        for rest in (
            "8: unknown option 'colour' for widget 'heatmap' (allowed: examples, mask) [widget]",
            "12: option 'value' (9) must be between min (0.2) and max (4) [widget]",
            f"15: unknown widget 'spinner' (known: {', '.join(sorted(all_widgets()))}) [widget]",
        )
    }, problems
    assert sorted(p.name for p in out.iterdir() if p.name != MARKER) == ["previous.html"]
    assert (out / "previous.html").read_text(encoding="utf-8") == "old site"
