"""What a code cell shows, build side: a stored figure and a course widget (attention_core.display) in the page."""

from __future__ import annotations

import base64
import json

import pytest

from builder.cells.render import _output_html
from builder.model import CellOutput


def test_a_stored_figure_is_an_img_and_a_widget_its_json_with_a_static_table() -> None:
    png = b"\x89PNG\r\n\x1a\nfake"
    figure = json.dumps(
        {
            "kind": "image/png",
            "data": base64.b64encode(png).decode(),
            "meta": {"cssWidth": 640, "cssHeight": 380, "alt": "图：<x>"},
        }
    )
    from attention_core.display import attention_widget

    widget = json.dumps(
        {
            "kind": "application/vnd.course.widget+json",
            "meta": {},
            "data": json.dumps(attention_widget([[1, 0], [0.25, 0.75]], ["a", "</script>"])),
        }
    )
    html = _output_html(CellOutput(chunks=[("stdout", "hi\n"), ("display", figure), ("display", widget)]))
    assert (
        f'<img class="cell-figure" src="data:image/png;base64,{base64.b64encode(png).decode()}" width="640" '
        f'height="380" alt="图：&lt;x&gt;">' in html
    )
    assert '<div class="widget cell-widget" data-widget="heatmap">' in html
    assert "<td>25%</td><td>75%</td>" in html  # the static table until the page mounts the heatmap
    assert "</script></div></div>" in html and html.count("</script>") == 1  # the token cannot close the JSON
    script = html.split('class="widget-data">')[1].split("</script>")[0]
    assert json.loads(script.replace("<\\/", "</"))["examples"][0]["tokens"] == ["a", "</script>"]


def test_show_attention_checks_its_input() -> None:
    from attention_core.display import attention_widget, row_widget

    with pytest.raises(ValueError, match="square"):
        attention_widget([[1, 0, 0]], ["a", "b", "c"])
    with pytest.raises(ValueError, match="tokens has 1 entries"):
        attention_widget([[1, 0], [0, 1]], ["a"])
    with pytest.raises(ValueError, match="NaN"):
        row_widget([float("nan"), 1.0])
    assert row_widget([0.5, 0.5], ["x", "y"])["data"]["row"] == [0.5, 0.5]


def test_show_attention_prints_a_table_outside_a_cell(capsys) -> None:
    import sys

    from attention_core import display

    saved = sys.modules.pop("cell_runtime", None)
    try:
        display.show_row([0.25, 0.75], ["猫", "跑"])
    finally:
        if saved is not None:
            sys.modules["cell_runtime"] = saved
    assert capsys.readouterr().out.splitlines() == [f"猫   25.0%  {'█' * 10}", f"跑   75.0%  {'█' * 30}"]
