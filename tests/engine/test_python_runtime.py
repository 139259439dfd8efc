"""The Python runtime, build side (builder/runtime/): the pinned files and their checks, the packages and their
bytecode, the fonts matplotlib draws with, the one shipped form of every file (wrapper scripts) and the index the
browser reads, and the build's cells running the very same files in Pyodide under Node with the host out of reach.
The browser side is tests/e2e/test_python_runtime.py and tests/engines/."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from builder.bundle import browser_data_prefix
from builder.cells import executor as cell_executor
from builder.model import CellOutput
from builder.runtime import (
    LOCK_NAME,
    RuntimeAssetError,
    fonts,
    load_manifest,
    python_runtime,
    read_asset,
    write_site_runtime,
)
from builder.runtime.wheels import stored_zip, wheel_files
from builder.runtime.wrappers import b85_bytes, b85_literal, wrapper_chunks, wrapper_payload
from tests.conftest import ROOT, TEST_CACHE

NPM = ROOT / "node_modules" / "pyodide"
MANIFEST = load_manifest()
PACKAGE = '"""A browser package of a test course."""\n\nimport json\n\n\ndef twice(x):\n    return 2 * x\n'
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="the runtime's bytecode and cells need Node")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pkg") / "tinycourse_maths"
    folder.mkdir()
    (folder / "__init__.py").write_text(PACKAGE, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def runtime(package):
    if shutil.which("node") is None:
        pytest.skip("Node is missing")
    return python_runtime(cache_dir=TEST_CACHE, root=ROOT, browser_packages=[package])


# ------------------------------------------------------------------------------------------ the pinned files


def test_the_manifest_pins_npm_pyodide_s_files_and_its_lock_s_wheels() -> None:
    for name, spec in MANIFEST["pyodide"]["files"].items():
        assert sha(NPM / name) == spec["sha256"] and (NPM / name).stat().st_size == spec["size"], name
    lock = json.loads((NPM / "pyodide-lock.json").read_text("utf-8"))["packages"]
    for name, spec in MANIFEST["packages"].items():
        assert spec["sha256"] == lock[name]["sha256"] and spec["file_name"] == lock[name]["file_name"], name
        assert spec["imports"] == lock[name]["imports"], name
        # every dependency the lock names is shipped, but the two matplotlib never imports with Agg
        assert set(lock[name]["depends"]) - {"pytz", "matplotlib-pyodide"} <= set(spec["depends"]), name
        assert set(spec["depends"]) <= set(MANIFEST["packages"]), name


def test_a_changed_or_missing_pyodide_file_is_refused_with_the_fix(tmp_path, package) -> None:
    dist = tmp_path / "pyodide"
    shutil.copytree(NPM, dist)
    data = bytearray((dist / "pyodide.asm.js").read_bytes())
    data[100] ^= 1
    (dist / "pyodide.asm.js").write_bytes(bytes(data))
    with pytest.raises(RuntimeAssetError) as err:
        python_runtime(cache_dir=tmp_path / "cache", root=ROOT, pyodide_dir=dist)
    assert "sha256 mismatch for pyodide.asm.js" in str(err.value) and "--pyodide-dir" in str(err.value)
    (dist / "pyodide.asm.js").unlink()
    with pytest.raises(RuntimeAssetError, match="pyodide.asm.js: missing"):
        python_runtime(cache_dir=tmp_path / "cache", root=ROOT, pyodide_dir=dist)


@pytest.mark.slow
@needs_node
def test_the_runtime_lists_its_packages_and_ships_bytecode(runtime, package) -> None:
    lock = runtime.lock
    assert lock["info"]["version"] == "0.27.7"
    assert set(lock["packages"]) == set(MANIFEST["packages"]) | {"tinycourse-maths"}
    own = lock["packages"]["tinycourse-maths"]
    assert own["imports"] == ["tinycourse_maths"] and own["depends"] == []  # json is the standard library's
    for entry in lock["packages"].values():
        assert sha(runtime.files[entry["file_name"]]) == entry["sha256"], entry["name"]
    assert runtime.preload == ["numpy"]
    assert runtime.boot[:5] == ["pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", LOCK_NAME]
    # bytecode where a start imports a module (stdlib) and everywhere in NumPy and the course's package
    with zipfile.ZipFile(runtime.files["python_stdlib.zip"]) as stdlib:
        names = set(stdlib.namelist())
    assert {"json/__init__.pyc", "ast.pyc", "traceback.pyc", "calendar.pyc"} <= names  # calendar: matplotlib's dates
    assert "json/__init__.py" not in names and "imaplib.py" in names  # nobody imports imaplib at start
    with zipfile.ZipFile(runtime.files[lock["packages"]["numpy"]["file_name"]]) as numpy:
        members = numpy.namelist()
    assert "numpy/__init__.pyc" in members and not [m for m in members if m.endswith(".py")]
    assert not [m for m in members if "/tests/" in m or m.endswith(".pyi")], "stripped: tests, stubs"
    with zipfile.ZipFile(runtime.files[own["file_name"]]) as wheel:
        assert "tinycourse_maths/__init__.pyc" in wheel.namelist()
        assert all(i.compress_type == zipfile.ZIP_STORED for i in wheel.infolist())  # the transport compresses


@needs_node
def test_the_site_ships_each_file_once_as_wrapper_scripts_and_an_index(runtime, tmp_path) -> None:
    dest = tmp_path / "assets" / "python"
    index = write_site_runtime(dest, runtime, TEST_CACHE)
    text = (dest / "runtime-index.js").read_text("utf-8")
    assert text.startswith(browser_data_prefix("python", "index"))
    assert json.loads(text[len(browser_data_prefix("python", "index")) :].rstrip().rstrip(";")) == index
    assert {a["name"] for a in index["assets"]} == set(runtime.files) | {LOCK_NAME}
    assert index["boot"] == runtime.boot and index["preload"] == ["numpy"]
    for a in index["assets"]:
        source = runtime.files.get(a["name"])
        expected = source.read_bytes() if source else runtime.lock_bytes()
        assert read_asset(dest, a) == expected, a["name"]  # the wrappers carry exactly the verified bytes
        assert sum((dest / w).stat().st_size for w in a["wrappers"]) == a["wrapperSize"]
    on_disk = {p.name for p in dest.iterdir()}
    assert on_disk == {w for a in index["assets"] for w in a["wrappers"]} | {"runtime-index.js"}
    assert not [n for n in on_disk if not n.endswith(".js")], "scripts only: no binary copy beside them"


@pytest.mark.parametrize("data", [b"", b"\0", b"abc", b"\xff" * 4, bytes(range(256)) * 3 + b"xy"])
def test_the_base85_literal_round_trips(data) -> None:
    """Python's b85encode is the reference (RFC 1924, no padding); the literal never needs escaping in a JS
    string (no quote, backslash or line break)."""
    text = b85_literal(data)
    assert text == base64.b85encode(data) and b85_bytes(text) == data
    assert not set(text) & set(b'"\\\n\r')
    chunks = wrapper_chunks("x.bin", data, chunk=100)
    assert len(chunks) == max(1, -(-len(data) // 100))
    assert b"".join(wrapper_payload(c) for c in chunks) == data


def test_text_outside_the_alphabet_is_refused() -> None:
    with pytest.raises(ValueError):
        b85_bytes(b'abc"e')
    with pytest.raises(ValueError):
        b85_bytes(b"~~~~~")  # 85**5 - 1 does not fit in four bytes


# ------------------------------------------------------------------------------------------ fonts


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
    fb.font.recalcTimestamp = False
    fb.font["head"].created = fb.font["head"].modified = 0
    out = io.BytesIO()
    fb.save(out)
    return out.getvalue()


def _fake_matplotlib_wheel() -> bytes:
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
    return stored_zip(
        [
            ("matplotlib/__init__.py", b""),
            ("matplotlib/font_manager.py", b"class FontManager:\n    __version__ = 330\n"),
            ("matplotlib/fontlist.json", json.dumps(fontlist).encode()),
            ("matplotlib/tests/test_x.py", b"x" * 1000),
            ("matplotlib/backends/backend_qt.py", b"q" * 500),
            ("matplotlib/backends/backend_agg.py", b"agg"),
            ("matplotlib/mpl-data/fonts/ttf/DejaVuSans.ttf", _tiny_font("Aαж中")),
            ("matplotlib/mpl-data/fonts/ttf/STIXGeneral.ttf", b"\1" * 20),
            ("matplotlib/mpl-data/fonts/afm/pzdr.afm", b"afm"),
        ]
    )


def test_matplotlib_ships_without_what_cells_never_need_and_lists_only_its_fonts() -> None:
    strip = tuple(MANIFEST["packages"]["matplotlib"]["strip"])
    files = dict(fonts.with_fonts(wheel_files(_fake_matplotlib_wheel(), strip), b"OTTO-cjk"))
    assert "matplotlib/tests/test_x.py" not in files and "matplotlib/backends/backend_qt.py" not in files
    assert "matplotlib/mpl-data/fonts/ttf/STIXGeneral.ttf" not in files
    assert "matplotlib/mpl-data/fonts/afm/pzdr.afm" not in files
    assert files["matplotlib/backends/backend_agg.py"] == b"agg" and files[fonts.CJK_FONT_FILE] == b"OTTO-cjk"
    from fontTools.ttLib import TTFont

    dejavu = TTFont(io.BytesIO(files["matplotlib/mpl-data/fonts/ttf/DejaVuSans.ttf"]))
    assert set(dejavu.getBestCmap()) == {ord(c) for c in "Aαж"}, "DejaVu Sans cut to DEJAVU_RANGES"
    fontlist = json.loads(files["matplotlib/fontlist.json"])
    assert fontlist["_version"] == 330  # the shipped FontManager's, or matplotlib would rescan every font
    assert [e["name"] for e in fontlist["ttflist"]] == ["DejaVu Sans", fonts.CJK_FONT_FAMILY]
    assert fontlist["afmlist"] == []


@pytest.mark.slow
def test_the_cjk_font_comes_from_the_pinned_package_cut_to_the_common_hanzi(tmp_path) -> None:
    """The same bytes on every machine, whatever fonts it has installed (a fresh machine has no CJK font)."""
    from fontTools.ttLib import TTFont

    assert len(fonts.gb2312_level1()) == 3755  # GB 2312 level 1
    data = fonts.cjk_font(tmp_path, MANIFEST["cjk_font"])
    cmap = TTFont(io.BytesIO(data)).getBestCmap()
    assert all(ord(c) in cmap for c in "他的注意力权重随温度的变化，。：（）")
    assert len(data) < 1_500_000  # a subset, not the whole family
    assert fonts.cjk_font(tmp_path / "elsewhere", MANIFEST["cjk_font"]) == data


# ------------------------------------------------------------------------------ build-time cells in Pyodide


def run(cells: list[tuple[str, bool]], runtime, timeout: float | None = None) -> list[dict]:
    request = [{"filename": f"<cell-{i}>", "code": c, "expect_error": e} for i, (c, e) in enumerate(cells)]
    return cell_executor.run_cells_in_pyodide(request, runtime, timeout=timeout)


@pytest.mark.slow
@needs_node
def test_cells_in_pyodide_share_a_namespace_and_cannot_reach_the_host(runtime) -> None:
    """One page = one interpreter: the probes run in order, each must fail with a clear exception."""
    probes = [
        ("import numpy as np\nimport tinycourse_maths as t\nx = np.arange(3)\nprint(x)\nt.twice(x)", False),
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
    # wasm32's default integer is int32 (CPython on x86-64 prints np.int64(3)): the kind of difference running
    # the build in the reader's runtime removes
    assert results[-1]["repr"] == "np.int32(3)" and results[-1]["error"] is None


@pytest.mark.slow
@needs_node
def test_a_runaway_cell_in_pyodide_is_stopped_and_named(runtime) -> None:
    with pytest.raises(cell_executor.CellRunError) as err:
        run([("x = 1", False), ("while True:\n    pass", False)], runtime, timeout=2.0)
    assert err.value.args == (1, "did not finish within 2 s (infinite loop?); the build stopped it")


@pytest.mark.slow
@needs_node
def test_plot_docstrings_point_to_setp_instead_of_the_property_tables(runtime) -> None:
    """cell_runtime.prepare_matplotlib leaves the property tables out of plot()'s & co. docstrings (building them
    was ~0.2 s of the import in wasm); the docstring says how to get the list, and that way works."""
    code = (
        "import matplotlib.pyplot as plt\nline, = plt.plot([0, 1])\n"
        "print(plt.plot.__doc__.count('plt.setp(对象)'), 'Properties:\\n    agg_filter' in plt.plot.__doc__)\n"
        "plt.setp(line, 'linestyle')\nplt.close('all')"
    )
    result = run([(code, False)], runtime)[0]
    assert result["error"] is None, result["error"]
    out = "".join(t for s, t in result["chunks"] if s == "stdout")
    assert out.startswith("1 False\n") and "linestyle: {'-', '--', '-.', ':', ''" in out, out


@pytest.mark.slow
@needs_node
def test_figures_drawn_at_build_time_are_deterministic_pngs_with_chinese(runtime) -> None:
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
    assert not [t for s, t in first["chunks"] if s == "stderr"], "no missing-glyph warning: the CJK font is there"


def test_every_build_of_a_page_writes_its_figures_even_when_the_outputs_come_from_this_process_s_cache(
    tmp_path, monkeypatch
) -> None:
    """The cache keeps the cell outputs it returns in memory, so the second build in a process gets the very
    objects the first one read. Turning the PNG into a site file must not strip those objects."""
    from builder.cells import run as cells_run
    from builder.errors import Problems
    from builder.model import Cell, ParseContext

    png = b"\x89PNG\r\n\x1a\nfake"
    figure = json.dumps({"kind": "image/png", "data": base64.b64encode(png).decode(), "meta": {}})
    executed = []

    def fake_execute(cells, env):
        executed.append(len(cells))
        return [CellOutput(chunks=[("stdout", "hi\n"), ("display", figure)])], None

    monkeypatch.setattr(cells_run, "_execute", fake_execute)
    files = []
    for _ in range(2):
        context = ParseContext("page.md", 0, Problems())
        context.cells = [Cell(token=None, id="plot", code="plt.plot([1, 2])", code_offset=1)]  # type: ignore[arg-type]
        cells_run.run_page_cells(context, tmp_path, cells_run.CellEnvironment())
        files.append(dict(context.facts.files))
        chunk = json.loads(context.cells[0].output.chunks[1][1])
        assert "data" not in chunk and chunk["src"] in context.facts.files  # the page shows the file, not base64
    assert executed == [1]  # the second build's outputs came from the cache …
    assert files[0] == files[1] and list(files[0].values()) == [png]  # … and it still wrote the figure


@pytest.mark.slow
@needs_node
def test_stoppable_loops_call_out_every_thousand_rounds_in_the_readers_code_only(runtime) -> None:
    """WebKit ends a stopped worker only when its code calls out of WebAssembly: once stoppable loops are on
    (runtime.js: in WebKit), the reader's loops — at the top level, in the functions they define — call the
    JavaScript tick every LOOP_TICK_EVERY rounds; code compiled elsewhere does not. (tests/engines checks that no
    browser thread goes on running a stopped loop.)"""
    probe = """
import cell_runtime
ticks = []
source = "def f():\\n    for _ in range(2500):\\n        pass\\nf()\\nn = 0\\nwhile n < 1000:\\n    n += 1\\n"
exec(cell_runtime.make_stoppable(compile(source, "<cell-x>", "exec")), {})
before = len(ticks)
cell_runtime.enable_stoppable_loops()
tick = cell_runtime._loop_tick
cell_runtime._loop_tick = lambda: ticks.append(tick())  # the real call out, counted
exec(cell_runtime.make_stoppable(compile(source, "<cell-x>", "exec")), {})
mine = len(ticks)
exec(compile("for _ in range(5000):\\n    pass\\n", "<library>", "exec"), {})
print(before, mine, len(ticks), all(t > 1e12 for t in ticks))  # milliseconds since 1970, from JavaScript
"""
    (result,) = run([(probe, False)], runtime)
    assert result["error"] is None, result["error"]
    assert result["chunks"] == [["stdout", "0 3 3 True\n"]], result  # 3,500 rounds: 3 calls; none elsewhere
