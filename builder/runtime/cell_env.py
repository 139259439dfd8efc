"""The runtime the build runs code cells in: the browser's own Pyodide 0.27.7 and packs, under Node.

`cell_runtime()` returns what builder/cells/executor.py (`run_cells_in_pyodide`) needs: the Node binary,
the verified Pyodide distribution and stdlib, the NumPy and attention_core packs the browser installs, and
the optional packs (matplotlib & co.) with their imports and dependencies; plus `key`, a digest of all of
it for the cells' cache.  None when Node or Pyodide is not there (the build then runs cells in CPython).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .files import runtime_cache_root, write_if_changed
from .optional import optional_packs
from .verify import STAMP_NAME, HashStamps, check_sha256, load_manifest, numpy_spec, pyodide_fix_hint, sha256_bytes
from .wheels import build_wheel_bytes, cached_pack, ensure_numpy_wheel, project_version, wheel_pack

_MEMO: dict[tuple, dict | None] = {}


def cell_runtime(
    *, cache_dir: Path, project_root: Path, pyodide_dir: Path | None = None, allow_download: bool = True
) -> dict | None:
    key = (str(cache_dir), str(project_root), str(pyodide_dir))
    if key not in _MEMO:
        _MEMO[key] = _make(Path(cache_dir), Path(project_root), pyodide_dir, allow_download)
    return _MEMO[key]


def _make(cache_dir: Path, root: Path, pyodide_dir: Path | None, allow_download: bool) -> dict | None:
    node = shutil.which("node")
    src_dir = Path(pyodide_dir) if pyodide_dir is not None else root / "node_modules" / "pyodide"
    if not node or not (src_dir / "pyodide.js").is_file():
        return None
    manifest = load_manifest()
    cache_root = runtime_cache_root(cache_dir)
    stamps = HashStamps(cache_root / STAMP_NAME)
    for name in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip"):
        spec = manifest["assets"][name]
        check_sha256(src_dir / name, name, spec, stamps.sha256(src_dir / name), pyodide_fix_hint(pyodide_dir))
    np_wheel = ensure_numpy_wheel(
        cache_root, manifest=manifest, pyodide_dir=pyodide_dir, allow_download=allow_download, stamps=stamps
    )
    np_pack = cached_pack(
        cache_root, np_wheel, stamps.sha256(np_wheel), tuple(numpy_spec(manifest)[1].get("strip", []))
    )
    packs = [{"path": str(np_pack), "wheel": np_wheel.name}]
    pkg = root / "attention_core"
    if pkg.is_dir():
        whl_name, whl = build_wheel_bytes(pkg, version=project_version(root, pkg), dist_name="attention_core")
        packed = wheel_pack(whl)
        path = cache_root / "cell-packs" / f"attention_core-{sha256_bytes(packed)[:16]}.pack"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_if_changed(path, packed)
        packs.append({"path": str(path), "wheel": whl_name})
    optional = {
        o["name"]: {"path": str(o["pack"]), "wheel": o["wheel"], "imports": o["imports"], "depends": o["depends"]}
        for o in optional_packs(cache_root, manifest, allow_download=allow_download, stamps=stamps, pyodide_dir=src_dir)
    }
    stamps.save()
    digests = [stamps.sha256(Path(p["path"])) for p in packs] + [
        stamps.sha256(Path(o["path"])) for o in optional.values()
    ]
    stamps.save()
    runtime = {
        "node": node,
        "pyodideDir": str(src_dir),
        "stdlib": str(src_dir / "python_stdlib.zip"),
        "packs": packs,
        "optional": optional,
    }
    runtime["key"] = sha256_bytes(
        json.dumps([manifest["pyodide_version"], digests, manifest["assets"]["python_stdlib.zip"]["sha256"]]).encode()
    )
    return runtime
