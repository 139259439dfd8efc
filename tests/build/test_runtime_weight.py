"""The Python runtime ships each asset once: its wrapper scripts (builder/runtime/wrappers.py), read by http and
file:// alike — no binary copy next to a base64 copy (the offline package was 42 MB that way)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zipfile
from pathlib import Path

import pytest
import zstandard

from builder.bundle import browser_data_prefix
from builder.runtime import read_pack
from builder.runtime.wrappers import b85_bytes, b85_literal, read_asset, wrapper_chunks, wrapper_payload
from builder.zipsite import zip_site
from tests.conftest import ROOT, build

NPM_DIR = ROOT / "node_modules" / "pyodide"


# One worker builds the module's site (~40 s): split over two xdist workers, each built its own.
pytestmark = pytest.mark.xdist_group("runtime-weight")


@pytest.fixture(scope="module")
def site_with_python(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("weight")
    content = root / "content"
    content.mkdir()
    (content / "site.yml").write_text("series: 测试\ntitle: 测试课程\nplanned: []\n", encoding="utf-8")
    (content / "index.md").write_text("---\ntitle: 首页\nkind: index\n---\n[下一页](a.html)\n", encoding="utf-8")
    (content / "a.md").write_text(
        "---\ntitle: 页面 A\n---\n```{code-cell} python\n:id: one\nprint(1)\n```\n", encoding="utf-8"
    )
    out = root / "site"
    build(content, out, python_runtime=True)
    return out


def _index(py_dir: Path) -> dict:
    text = (py_dir / "runtime-index.js").read_text("utf-8")
    return json.loads(text[len(browser_data_prefix("python", "index")) :].rstrip().rstrip(";"))


def test_each_runtime_asset_is_shipped_once_as_wrapper_scripts(site_with_python):
    py_dir = site_with_python / "assets" / "python"
    index = _index(py_dir)
    names = [a["name"] for a in index["assets"]]
    in_bundle = [p["name"] for a in index["assets"] for p in a.get("parts", ())]  # the boot bundle's parts
    assert {"pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"} <= set(
        names
    ) | set(in_bundle)
    assert any(n.endswith(".pack") for n in names + in_bundle)
    assert not set(names) & set(in_bundle)
    wrappers = {w for a in index["assets"] for w in a["wrappers"]}
    # what the folder holds: the loader, the index and the wrapper scripts — nothing else
    assert {p.name for p in py_dir.iterdir()} == wrappers | {"python-runtime.js", "runtime-index.js"}
    for a in index["assets"]:
        assert not (py_dir / a["name"]).exists(), f"{a['name']} is shipped a second time as a binary"
        assert a["wrappers"] == [f"{a['name']}.{i}.js" for i in range(len(a["wrappers"]))]
    # and no payload is in two assets (e.g. the same bytes under two names)
    digests = [a["sha256"] for a in index["assets"]]
    assert len(digests) == len(set(digests))


def test_the_wrappers_carry_the_verified_distribution_bytes(site_with_python):
    """Decoding the wrappers the way transport.js does gives back Pyodide's own files (the wasm and the
    scripts compressed with Zstandard, which is how their payload gets small)."""
    py_dir = site_with_python / "assets" / "python"
    index = _index(py_dir)
    by_name = {a["name"]: a for a in index["assets"]}
    for name in ("pyodide.asm.wasm", "pyodide.asm.js", "pyodide.js"):
        entry = by_name[name]
        assert entry["encoding"] == "zstd"
        assert read_asset(py_dir, entry) == (NPM_DIR / name).read_bytes(), name
        assert entry["size"] < 0.5 * entry["decodedSize"], name
    wasm = by_name["pyodide.asm.wasm"]
    payload = b"".join(wrapper_payload((py_dir / w).read_bytes()) for w in wasm["wrappers"])
    assert hashlib.sha256(payload).hexdigest() == wasm["sha256"] and len(payload) == wasm["size"]
    assert zstandard.ZstdDecompressor().decompress(payload)[:4] == b"\0asm"
    # five characters of script per four payload bytes, plus a line of JS per chunk
    assert wasm["wrapperSize"] < 1.26 * wasm["size"]


def test_the_optional_packs_are_lazy_assets_of_the_same_transport(site_with_python):
    """matplotlib & co. (builder/runtime/optional.py) ship like every asset — wrapper scripts, once — marked
    lazy (no boot loads them); `optional.packages` only says which imports need which pack."""
    py_dir = site_with_python / "assets" / "python"
    index = _index(py_dir)
    packages = index["optional"]["packages"]
    assert "matplotlib" in packages, "the build's cache has the optional wheels (or downloads them)"
    assert set(index["optional"]) == {"packages"}, "no second list of assets"
    lazy = {a["name"]: a for a in index["assets"] if a.get("lazy")}
    assert set(lazy) == {p["pack"] for p in packages.values()}
    shipped = {}
    for name, pkg in packages.items():
        entry = lazy[pkg["pack"]]
        assert entry["encoding"] == "zstd"  # packs are stored raw: the transport compresses them like the rest
        shipped[name] = {f for f, _ in read_pack(read_asset(py_dir, entry))}
        # the pack holds the modules its imports name (a package folder, or a single module like six.py)
        assert any(f.split("/")[0].split(".")[0] in pkg["imports"] for f in shipped[name]), name
    assert shipped["matplotlib"] & {"matplotlib/pyplot.py", "matplotlib/pyplot.pyc"}


def test_the_offline_package_holds_the_wrappers_once(site_with_python, tmp_path):
    path = zip_site(site_with_python, tmp_path / "course.zip")
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    py = [n.rsplit("/", 1)[1] for n in names if "/assets/python/" in n and not n.endswith("/")]
    assert not [n for n in py if not n.endswith(".js")], "only scripts: no binary copies"
    assert not [n for n in py if re.search(r"\.(wasm|zip|pack|snap)$", n)]


@pytest.mark.parametrize("data", [b"", b"\0", b"abc", b"\xff" * 4, bytes(range(256)) * 3 + b"xy"])
def test_the_base85_literal_round_trips(data):
    """Python's b85encode is the reference (RFC 1924 alphabet, no padding); the literal never needs escaping
    in a JS string (no quote, backslash or line break)."""
    text = b85_literal(data)
    assert text == base64.b85encode(data) and b85_bytes(text) == data
    assert not set(text) & set(b'"\\\n\r')
    chunks = wrapper_chunks("x.bin", data, chunk=100)
    assert len(chunks) == max(1, -(-len(data) // 100))
    assert b"".join(wrapper_payload(c) for c in chunks) == data


def test_text_outside_the_alphabet_is_refused():
    with pytest.raises(ValueError):
        b85_bytes(b'abc"e')
    with pytest.raises(ValueError):
        b85_bytes(b"~~~~~")  # 85**5 - 1 does not fit in four bytes
