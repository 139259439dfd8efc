"""Python that draws (issue 15), build side: the optional packs (matplotlib & co.: pinned hashes, what is
stripped, the font list, the CJK font), the figures and widgets a cell shows, and the build-time cells in
Pyodide under Node with the host out of reach."""

from __future__ import annotations

import base64
import io
import json
import zipfile

import pytest

from builder.cells import executor as cell_executor
from builder.cells.render import _output_html
from builder.model import CellOutput
from builder.runtime import cell_runtime, load_manifest, optional, read_pack
from builder.runtime.verify import RuntimeAssetError, sha256_bytes
from tests.conftest import ROOT

LOCK = ROOT / "node_modules" / "pyodide" / "pyodide-lock.json"


# --------------------------------------------------------------------------------------- the manifest


def test_every_optional_wheel_is_pinned_to_pyodide_s_own_lock_hash() -> None:
    """The sha256 values were copied from npm pyodide@0.27.7's pyodide-lock.json: they must stay equal."""
    lock = json.loads(LOCK.read_text("utf-8"))["packages"]
    specs = load_manifest()["optional_packages"]
    assert set(specs) == {
        "matplotlib",
        "contourpy",
        "cycler",
        "fonttools",
        "kiwisolver",
        "pillow",
        "pyparsing",
        "python-dateutil",
        "six",
        "packaging",
    }
    for name, spec in specs.items():
        assert spec["sha256"] == lock[name]["sha256"] and spec["file_name"] == lock[name]["file_name"], name
        assert spec["imports"] == lock[name]["imports"], name
        # every dependency the lock names is shipped, except the two matplotlib never imports with Agg
        assert set(lock[name]["depends"]) - {"pytz", "matplotlib-pyodide"} <= set(spec["depends"]) | {"numpy"}, name


def test_a_wheel_with_other_bytes_is_refused(tmp_path) -> None:
    spec = load_manifest()["optional_packages"]["six"]
    with pytest.raises(RuntimeAssetError) as err:
        optional.check_optional_sha256(tmp_path / spec["file_name"], "six", spec, sha256_bytes(b"not six"))
    assert "sha256 mismatch for six" in str(err.value) and spec["sha256"] in str(err.value)


def test_a_cached_wheel_that_was_tampered_with_is_not_used(tmp_path) -> None:
    """A corrupt cached wheel is thrown away; with no network allowed that is a clear error, not a pack."""
    manifest = load_manifest()
    spec = manifest["optional_packages"]["six"]
    (tmp_path / spec["file_name"]).write_bytes(b"tampered")
    from builder.runtime.verify import HashStamps

    with pytest.raises(RuntimeAssetError, match="missing"):
        optional.ensure_optional_wheels(
            tmp_path, manifest, allow_download=False, stamps=HashStamps(tmp_path / "s.json")
        )


# ------------------------------------------------------------------------------------------ the packs


def _tiny_font(chars: str) -> bytes:
    """A real (if ugly) TrueType font named DejaVu Sans with one square glyph per character."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    names = [".notdef"] + [f"uni{ord(c):04X}" for c in chars]
    pen = TTGlyphPen(None)
    for x, y in ((100, 0), (100, 700), (500, 700), (500, 0)):
        (pen.moveTo if x == 100 and y == 0 else pen.lineTo)((x, y))
    pen.closePath()
    fb = FontBuilder(1000, isTTF=True)
    fb.setupGlyphOrder(names)
    fb.setupCharacterMap({ord(c): n for c, n in zip(chars, names[1:])})
    fb.setupGlyf({n: pen.glyph() for n in names})
    fb.setupHorizontalMetrics({n: (600, 100) for n in names})
    fb.setupHorizontalHeader(ascent=800, descent=-200)
    fb.setupNameTable({"familyName": "DejaVu Sans", "styleName": "Book"})
    fb.setupOS2()
    fb.setupPost()
    fb.font.recalcTimestamp = False  # FontBuilder stamps the clock: same chars, same bytes
    fb.font["head"].created = fb.font["head"].modified = 0
    out = io.BytesIO()
    fb.save(out)
    return out.getvalue()


DEJAVU_CHARS = "Aαж中"  # Latin, Greek, Cyrillic kept; a hanzi DejaVu Sans never needs (the CJK font draws it)


def _fake_matplotlib_wheel() -> bytes:
    buf = io.BytesIO()
    fontlist = {
        "_version": 390,
        "afmlist": [{"fname": "fonts/afm/pzdr.afm", "__class__": "FontEntry"}],
        "ttflist": [
            {"fname": "fonts/ttf/DejaVuSans.ttf", "name": "DejaVu Sans", "__class__": "FontEntry"},
            {"fname": "fonts/ttf/STIXGeneral.ttf", "name": "STIXGeneral", "__class__": "FontEntry"},
            {"fname": "/System/Library/Fonts/Kaiti.ttc", "name": "Kaiti", "__class__": "FontEntry"},
        ],
        "__class__": "FontManager",
    }
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("matplotlib/__init__.py", "")
        zf.writestr("matplotlib/font_manager.py", "class FontManager:\n    __version__ = 330\n")
        zf.writestr("matplotlib/fontlist.json", json.dumps(fontlist))
        zf.writestr("matplotlib/tests/test_x.py", "x" * 1000)
        zf.writestr("matplotlib/backends/backend_qt.py", "q" * 500)
        zf.writestr("matplotlib/backends/backend_agg.py", "agg")
        zf.writestr("matplotlib/mpl-data/fonts/ttf/DejaVuSans.ttf", _tiny_font(DEJAVU_CHARS))
        zf.writestr("matplotlib/mpl-data/fonts/ttf/STIXGeneral.ttf", b"\1" * 20)
        zf.writestr("matplotlib/mpl-data/fonts/afm/pzdr.afm", b"afm")
    return buf.getvalue()


def test_the_matplotlib_pack_drops_what_cells_never_need_and_lists_only_shipped_fonts() -> None:
    spec = load_manifest()["optional_packages"]["matplotlib"]
    packed, report = optional.optional_pack_bytes("matplotlib", _fake_matplotlib_wheel(), spec, font=b"OTTO-font")
    files = dict(read_pack(packed))
    assert "matplotlib/tests/test_x.py" not in files and "matplotlib/backends/backend_qt.py" not in files
    assert (
        "matplotlib/mpl-data/fonts/ttf/STIXGeneral.ttf" not in files
        and "matplotlib/mpl-data/fonts/afm/pzdr.afm" not in files
    )
    assert files["matplotlib/backends/backend_agg.py"] == b"agg"
    assert files[optional.CJK_FONT_FILE] == b"OTTO-font"
    from fontTools.ttLib import TTFont

    dejavu = TTFont(io.BytesIO(files["matplotlib/mpl-data/fonts/ttf/DejaVuSans.ttf"]))
    assert set(dejavu.getBestCmap()) == {ord(c) for c in "Aαж"}, "DejaVu Sans cut to DEJAVU_RANGES"
    assert dejavu["name"].getDebugName(1) == "DejaVu Sans"  # the family matplotlib's font list names
    # stripped: test 1000 + qt 500 + STIX 20 + afm 3 bytes, 4 files
    assert report["stripped_files"] == 4 and report["stripped_bytes"] == 1523
    fontlist = json.loads(files["matplotlib/fontlist.json"])
    assert fontlist["_version"] == 330  # the shipped FontManager's, or matplotlib would rescan every font
    assert [e["name"] for e in fontlist["ttflist"]] == ["DejaVu Sans", optional.CJK_FONT_FAMILY]
    assert fontlist["afmlist"] == []
    # deterministic: same input, same bytes
    assert optional.optional_pack_bytes("matplotlib", _fake_matplotlib_wheel(), spec, font=b"OTTO-font")[0] == packed


def test_the_cjk_subset_covers_the_common_hanzi() -> None:
    chars = optional.cjk_font_characters()
    assert len(optional.gb2312_level1()) == 3755  # GB 2312 level 1 has 3,755 hanzi
    for ch in "注意力权重温度词元矩阵，。：（）":
        assert ch in chars


def test_the_cjk_font_subset_has_the_glyphs(tmp_path) -> None:
    if optional.find_cjk_font() is None:
        pytest.skip("fonts-noto-cjk not installed")
    from fontTools.ttLib import TTFont

    data = optional.cjk_font(tmp_path)
    cmap = TTFont(io.BytesIO(data)).getBestCmap()
    assert all(ord(c) in cmap for c in "他的注意力权重随温度的变化")
    assert len(data) < 1_200_000  # a subset, not the 16 MB collection
    assert optional.cjk_font(tmp_path) == data  # cached, same bytes


# ----------------------------------------------------------------------------- stored figures, widgets


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

    saved = sys.modules.pop("course_runtime", None)
    try:
        display.show_row([0.25, 0.75], ["猫", "跑"])
    finally:
        if saved is not None:
            sys.modules["course_runtime"] = saved
    assert capsys.readouterr().out.splitlines() == [f"猫   25.0%  {'█' * 10}", f"跑   75.0%  {'█' * 30}"]


# ------------------------------------------------------------------------ build-time cells in Pyodide


@pytest.fixture(scope="module")
def runtime():
    rt = cell_runtime(cache_dir=ROOT / ".test-cache", project_root=ROOT)
    if rt is None:
        pytest.skip("Node or node_modules/pyodide missing")
    return rt


def run(cells: list[tuple[str, bool]], runtime, timeout: float | None = None) -> list[dict]:
    request = [
        {"filename": f"<cell-{i}>", "code": code, "expect_error": expect} for i, (code, expect) in enumerate(cells)
    ]
    return cell_executor.run_cells_in_pyodide(request, ROOT, runtime, timeout=timeout)


def test_cells_in_pyodide_share_a_namespace_and_cannot_reach_the_host(runtime) -> None:
    """One page = one interpreter: the probes run in order, each must fail with a clear exception."""
    probes = [
        ("import numpy as np\nx = np.arange(3)\nprint(x)\nx * 2", False),
        ("open('/etc/passwd').read()", True),  # host files: not there
        ("import subprocess\nsubprocess.Popen(['sleep', '600'])", True),  # processes
        ("import os\nos.system('sleep 600')", True),
        ("import socket\nsocket.create_connection(('127.0.0.1', 80), timeout=2)", True),  # network
        ("import urllib.request\nurllib.request.urlopen('http://127.0.0.1:9/')", True),
        ("import js\njs.fetch('http://127.0.0.1:9/')", True),  # the JS side of it
        ("import js\njs.process", True),
        ("import js\njs.Function('return process')()", True),  # no eval to rebuild them
        ("import pyodide_js\npyodide_js.mountNodeFS('/host', '/etc')", True),  # Node's permission model
        ("x.sum()", False),
    ]
    results = run(probes, runtime)
    assert len(results) == len(probes)
    assert results[0]["chunks"] == [["stdout", "[0 1 2]\n"]] and results[0]["repr"] == "array([0, 2, 4])"
    errors = [(r["error"] or {}).get("type") for r in results[1:-1]]
    assert errors == [
        "FileNotFoundError",
        "OSError",
        "OSError",
        "OSError",
        "URLError",
        "AttributeError",
        "AttributeError",
        "JsException",
        "JsException",
    ], [r["error"] for r in results]
    assert "cannot start processes" in results[3]["error"]["message"]
    assert "Code generation from strings disallowed" in results[8]["error"]["message"]
    # the namespace survived the probes; wasm32's default integer is int32 (CPython on x86-64 prints
    # np.int64(3)): exactly the kind of difference running the build in the reader's runtime removes
    assert results[-1]["repr"] == "np.int32(3)" and results[-1]["error"] is None


def test_a_runaway_cell_in_pyodide_is_stopped_and_named(runtime) -> None:
    with pytest.raises(cell_executor.CellRunError) as err:
        run([("x = 1", False), ("while True:\n    pass", False)], runtime, timeout=2.0)
    assert err.value.args == (1, "did not finish within 2 s (infinite loop?); the build stopped it")


def test_plot_docstrings_point_to_setp_instead_of_the_property_tables(runtime) -> None:
    """course_runtime.prepare_matplotlib leaves the property tables out of plot()'s & co. docstrings (building
    them was ~0.2 s of the import in wasm); the docstring says how to get the list, and that way works."""
    code = (
        "import matplotlib.pyplot as plt\nline, = plt.plot([0, 1])\n"
        "print(plt.plot.__doc__.count('plt.setp(对象)'), 'Properties:\\n    agg_filter' in plt.plot.__doc__)\n"
        "plt.setp(line, 'linestyle')\nplt.close('all')"
    )
    result = run([(code, False)], runtime)[0]
    assert result["error"] is None, result["error"]
    out = "".join(t for s, t in result["chunks"] if s == "stdout")
    assert out.startswith("1 False\n") and "linestyle: {'-', '--', '-.', ':', ''" in out, out


def test_figures_drawn_at_build_time_are_deterministic_pngs(runtime) -> None:
    code = (
        "import matplotlib.pyplot as plt\nplt.plot([0, 1], [1, 0])\nplt.title('注意力')\nplt.show()\n"
        "print('between')\nfig, ax = plt.subplots()\nax.bar(['甲', '乙'], [1, 2])\n"
    )
    first, second = (run([(code, False)], runtime)[0] for _ in range(2))
    assert first["error"] is None, first["error"]
    kinds = [(s, json.loads(t)["kind"] if s == "display" else t) for s, t in first["chunks"]]
    # plt.show() draws the first figure where it is called; the second, left open, at the end of the cell
    assert kinds == [("display", "image/png"), ("stdout", "between\n"), ("display", "image/png")], kinds
    png = base64.b64decode(json.loads(first["chunks"][0][1])["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and b"tIME" not in png and b"Software" not in png
    assert first["chunks"] == second["chunks"]  # same bytes on every build
    assert first["repr"] is None  # a plotting call's artist list is not echoed


def test_every_build_of_a_page_writes_its_figures_even_when_the_outputs_come_from_this_process_s_cache(
    tmp_path, monkeypatch
) -> None:
    """The cache keeps the cell outputs it returns in memory, so the second build in a process (the tests build
    the course into several folders) gets the very objects the first one read. Turning the PNG into a site file
    must not strip those objects: CI once built a site whose pages pointed at assets/figures/*.png it never wrote."""
    from builder.cells import run as cells_run
    from builder.errors import Problems
    from builder.model import Cell, ParseContext

    png = b"\x89PNG\r\n\x1a\nfake"
    figure = json.dumps({"kind": "image/png", "data": base64.b64encode(png).decode(), "meta": {}})
    executed = []

    def fake_execute(cells, root, runtime=None):
        executed.append(len(cells))
        return [CellOutput(chunks=[("stdout", "hi\n"), ("display", figure)])], None

    monkeypatch.setattr(cells_run, "_execute", fake_execute)
    files = []
    for _ in range(2):
        context = ParseContext("page.md", 0, Problems())
        context.cells = [Cell(token=None, id="plot", code="plt.plot([1, 2])", code_offset=1)]  # type: ignore[arg-type]
        cells_run.run_page_cells(context, tmp_path, ROOT, None)
        files.append(dict(context.facts.files))
        chunk = json.loads(context.cells[0].output.chunks[1][1])
        assert "data" not in chunk and chunk["src"] in context.facts.files  # the page shows the file, not base64
    assert executed == [1]  # the second build's outputs came from the cache …
    assert files[0] == files[1] and list(files[0].values()) == [png]  # … and it still wrote the figure
