"""Self-hosted Python runtime: Pyodide 0.27.7 + NumPy + our `attention_core` wheel, verified and packed.

`prepare_python_runtime()` fills `site/assets/python/` with

* the assets `pyodide.js`, `pyodide.asm.js`, `pyodide.asm.wasm`, `python_stdlib.zip`, a trimmed
  `pyodide-lock.json` (numpy + attention-core only), a memory snapshot of a booted interpreter
  (`python-snapshot-<key>.snap`, see snapshot.py), and the NumPy and attention_core wheels as
  packs (`*.pack`, see wheels.py, `wheel_pack`) that the worker unpacks with the browser's native inflate,
  and the optional packs (matplotlib & co., optional.py) that only a cell importing them loads (`lazy`) —
  each shipped once, as classic-script wrappers `<name>.<i>.js` that http and file:// both read (wrappers.py);
* `runtime-index.js`: `Course.python.index = {...}` listing the assets with their payload's size, sha256 and
  encoding (zstd or none), and wrapper chunk names (loaded by `<script>` in both modes, so the runtime knows
  what to load and how big it is), `lazy: true` on the assets no boot loads, and under `optional.packages`
  each optional package's pack, wheel, imports and depends.  Any asset added to the plan below gets this
  transport.

Every copied asset is checked against the manifest first (verify.py).
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from builder.bundle import browser_data_script

from .bundle import RUNTIME_JS_NAME, bundle_python_runtime, theme_python_dir
from .files import copy_if_stale, runtime_cache_root, write_if_changed
from .optional import optional_packs
from .precompile import FIRST_FIGURE_STDLIB, SITE_PACKAGES, STDLIB_NAME, WARM_IMPORTS, precompiled
from .snapshot import SNAPSHOT_ENV, SNAPSHOT_PREFIX, memory_snapshot
from .verify import (
    MANIFEST_PATH,
    STAMP_NAME,
    HashStamps,
    RuntimeAssetError,
    check_sha256,
    load_manifest,
    numpy_spec,
    pyodide_fix_hint,
    sha256_bytes,
)
from .wheels import (
    build_wheel_bytes,
    cached_pack,
    ensure_numpy_wheel,
    lock_entry_for_wheel,
    pack_bytes,
    pack_name,
    package_imports,
    project_version,
    read_pack,
    trimmed_lock,
    wheel_pack,
)
from .wrappers import (
    WRAPPER_CHUNK,
    WRAPPER_ENCODING,
    cached_wrappers,
    encode_payload,
    payload_record,
    wrapper_chunks,
    wrapper_name,
)

LOCK_NAME = "pyodide-lock.json"
INDEX_NAME = "runtime-index.js"
BUNDLE_PREFIX = "python-boot-"


STDLIB_MOUNT = "/lib/python312.zip/"  # where Pyodide puts the stdlib zip (on sys.path): its modules' __file__
BUNDLE_VERSION = "1"  # bump when what the bundle leaves out changes (part of its key)


def without_loaded_modules(name: str, kind: str, blob: bytes, loaded: set[str]) -> bytes:
    """A boot-bundle part without the bytes of the modules the snapshot's heap already holds, imported
    (`loaded`: their `__file__`s, recorded by snapshot.cjs): they stay in `sys.modules` for the life of the
    interpreter, so nothing reads those files again.  A pack leaves such compiled (.pyc) files out — sources, like
    attention_core's, stay to be read; the stdlib zip keeps every entry where it was (zipimport's table in the heap
    holds the offsets) with the loaded ones' data zeroed.  Both compress to almost nothing.  The build-time cells,
    and a boot without a snapshot, use the whole files."""
    if kind == "pack":
        return pack_bytes(
            [(f, d) for f, d in read_pack(blob) if not (f.endswith(".pyc") and SITE_PACKAGES + f in loaded)]
        )
    if kind == "file" and name == STDLIB_NAME:
        out = bytearray(blob)
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            for info in zf.infolist():
                if STDLIB_MOUNT + info.filename not in loaded:
                    continue
                if info.compress_type != zipfile.ZIP_STORED:
                    raise RuntimeAssetError(f"{STDLIB_NAME}: {info.filename} is not stored (the zip was not made here)")
                head = info.header_offset
                start = (
                    head
                    + 30
                    + int.from_bytes(blob[head + 26 : head + 28], "little")
                    + int.from_bytes(blob[head + 28 : head + 30], "little")
                )  # the local header's name and extra
                out[start : start + info.compress_size] = bytes(info.compress_size)
        return bytes(out)
    return blob


def boot_bundle(
    cache_root: Path, members: list[tuple[str, tuple[str, Path | None, bytes | None, str]]], loaded: set[str]
) -> tuple[Path, list[dict]]:
    """The plan entries of `members` ([(kind, entry)], kind "file" | "snapshot" | "pack") as one file, made once
    into the cache: (`<cache>/bundles/<key>/python-boot-<key>.bundle`, parts [{name, kind, offset, size}] in file
    order).  A "file" (the stdlib zip) is what Pyodide itself fetches: the worker answers that fetch with the part."""
    key = sha256_bytes(
        json.dumps([BUNDLE_VERSION, [(name, digest) for _, (name, _, _, digest) in members], sorted(loaded)]).encode()
    )[:16]
    out = cache_root / "bundles" / key / f"{BUNDLE_PREFIX}{key}.bundle"
    record = out.with_suffix(".json")
    if out.is_file() and record.is_file():
        return out, json.loads(record.read_text("utf-8"))
    parts, offset, blobs = [], 0, []
    for kind, (name, src, data, _) in members:
        blob = without_loaded_modules(name, kind, data if data is not None else src.read_bytes(), loaded)
        blobs.append(blob)
        parts.append({"name": name, "kind": kind, "offset": offset, "size": len(blob)})
        offset += len(blob)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_if_changed(out, b"".join(blobs))
    write_if_changed(record, json.dumps(parts).encode())
    return out, parts


@dataclass
class RuntimeInfo:
    pyodide_version: str
    files: list[str] = field(default_factory=list)
    """Names (relative to dest) of every file this step wrote or kept up to date."""
    asset_names: list[str] = field(default_factory=list)
    """The runtime's assets, in index (boot) order; each ships once, as wrapper scripts (wrappers.py)."""
    http_files: list[str] = field(default_factory=list)
    """The files both transports read: every asset's wrapper scripts (the same list as file_protocol_files)."""
    file_protocol_files: list[str] = field(default_factory=list)
    http_bytes: int = 0
    """Bytes a browser downloads on first load over http (without python-runtime.js itself)."""
    file_bytes: int = 0
    """Bytes read on first load from file:// (the same wrapper scripts as http)."""
    attention_core_wheel: str | None = None
    numpy_wheel: str = ""
    bytecode: bool = False
    """True when the stdlib and NumPy ship as precompiled .pyc (see `precompiled`)."""
    snapshot: str | None = None
    """File name of the memory snapshot the worker restores instead of starting CPython (see `memory_snapshot`)."""
    optional_bytes: int = 0
    """Bytes of the lazy assets' wrapper scripts (the optional packs: matplotlib & co.), read only when a cell
    needs them — not part of http_bytes / file_bytes."""
    optional_file_bytes: int = 0
    """The same bytes over file:// (the same wrapper scripts)."""
    optional_report: dict = field(default_factory=dict)
    """{package: {files, bytes, stripped_files, stripped_bytes}} (see optional.py)."""


def prepare_python_runtime(
    dest: Path,
    *,
    cache_dir: Path,
    pyodide_dir: Path | None = None,
    project_root: Path,
    allow_download: bool = True,
    manifest_path: Path = MANIFEST_PATH,
    bundle: bool = True,
    compile_bytecode: bool = True,
    memory_snapshot_enabled: bool = True,
    optional_packages: bool = True,
    lazy_assets: dict[str, Path] | None = None,
) -> RuntimeInfo:
    """Write the verified Python runtime (http files + file:// wrappers + runtime-index.js) into `dest`.

    `cache_dir` is the build cache root (e.g. `.cache`); this step uses `<cache_dir>/pyodide/`.
    With `bundle` (default) it also writes `python-runtime.js` (see `bundle_python_runtime`).
    `allow_download=False` never touches the network: a missing/corrupt NumPy wheel is an error.
    `compile_bytecode` (default) ships the stdlib zip and the NumPy wheel with precompiled .pyc instead of
    .py (see `precompiled`); their sha256 in the index and lock are then those of the compiled files.
    `memory_snapshot_enabled` (default) adds a booted-interpreter heap snapshot (see `memory_snapshot`).
    `optional_packages` (default) adds the packs loaded only by cells that import them (matplotlib & co.,
    optional.py): lazy assets (below), their imports and dependencies listed in the index under `optional`.
    `lazy_assets` ({name: file}) ships more files the same way, marked `lazy` in the index: not loaded at boot,
    fetched (http) or asked of the page (file://) when the worker needs one (worker.js, `assetBytes`).
    """
    manifest = load_manifest(manifest_path)
    version = manifest["pyodide_version"]
    dest.mkdir(parents=True, exist_ok=True)
    cache_root = runtime_cache_root(cache_dir)
    stamps = HashStamps(cache_root / STAMP_NAME)
    src_dir = Path(pyodide_dir) if pyodide_dir is not None else project_root / "node_modules" / "pyodide"
    info = RuntimeInfo(pyodide_version=version)

    # (name, source path or None, bytes or None, sha256)
    plan: list[tuple[str, Path | None, bytes | None, str]] = []
    for name, spec in manifest["assets"].items():
        if name.endswith(".whl"):
            continue
        src = src_dir / name
        if not src.is_file():
            raise RuntimeAssetError(
                f"{src}: missing ({spec['source']}); fix: {pyodide_fix_hint(pyodide_dir)}",
                file=src,
                expected=spec["sha256"],
            )
        check_sha256(src, name, spec, stamps.sha256(src), pyodide_fix_hint(pyodide_dir))
        plan.append((name, src, None, spec["sha256"]))

    np_name, np_spec = numpy_spec(manifest)
    np_strip = tuple(np_spec.get("strip", []))  # files of the wheel no cell can use (manifest)
    np_path = ensure_numpy_wheel(
        cache_root, manifest=manifest, pyodide_dir=pyodide_dir, allow_download=allow_download, stamps=stamps
    )
    plan.append((np_name, np_path, None, np_spec["sha256"]))
    info.numpy_wheel = np_name

    np_lock = dict(manifest["lock"]["packages"]["numpy"])
    pkg_dir = project_root / "attention_core"
    warm_imports = ", ".join([WARM_IMPORTS, *package_imports(pkg_dir)]) if pkg_dir.is_dir() else WARM_IMPORTS
    if compile_bytecode:
        std_src = next(p[1] for p in plan if p[0] == STDLIB_NAME)
        compiled = precompiled(
            cache_root,
            src_dir,
            (std_src, manifest["assets"][STDLIB_NAME]["sha256"]),
            (np_path, np_spec["sha256"]),
            ", ".join([warm_imports, FIRST_FIGURE_STDLIB]),
        )
        if compiled:
            swap = {std_src: compiled[0], np_path: compiled[1]}
            plan = [
                (n, swap[src], None, stamps.sha256(swap[src])) if src in swap else (n, src, d, h)
                for n, src, d, h in plan
            ]
            np_lock["sha256"] = stamps.sha256(compiled[1])
            info.bytecode = True

    snapshot_name = snapshot_entry = None
    loaded_modules: set[str] = set()
    if memory_snapshot_enabled:
        std_now = next(p for p in plan if p[0] == STDLIB_NAME)
        np_now = next(p for p in plan if p[0] == np_name)
        np_pack = cached_pack(cache_root, np_now[1], np_now[3], np_strip)
        made = memory_snapshot(
            cache_root,
            src_dir,
            (std_now[1], std_now[3]),
            (np_pack, stamps.sha256(np_pack)),
            manifest["assets"]["pyodide.asm.wasm"]["sha256"],
            warm_imports,
            theme_python_dir=theme_python_dir(project_root),
        )
        if made:
            snap, dynlibs = made
            dynlibs = dict(dynlibs)
            loaded_modules = set(dynlibs.pop("imported", []))  # for the boot bundle, not the index
            with open(snap, "rb") as f:  # the heap size is the first field after the magic
                head = f.read(8)
            snapshot_entry = {
                "name": snap.name,
                "size": int.from_bytes(head[4:8], "little"),
                "dynlibs": dynlibs,
                "dataXor": dynlibs["dataXor"],
            }  # snapshot.py: xor_data_segment
            snapshot_name = snap.name
            plan.append((snapshot_name, snap, None, stamps.sha256(snap)))
            info.snapshot = snapshot_name

    extra_lock: dict[str, dict] = {"numpy": np_lock}
    imports = ["numpy"]
    packages = ["numpy"]
    if pkg_dir.is_dir() and any(pkg_dir.glob("*.py")):
        ac_version = project_version(project_root, pkg_dir)
        whl_name, whl = build_wheel_bytes(pkg_dir, version=ac_version, dist_name="attention_core")
        extra_lock["attention-core"] = lock_entry_for_wheel(
            whl_name, whl, name="attention-core", version=ac_version, imports=["attention_core"], depends=["numpy"]
        )
        plan.append((whl_name, None, whl, sha256_bytes(whl)))
        info.attention_core_wheel = whl_name
        imports.append("attention_core")
        packages.append("attention-core")
    # Wheels ship as packs (see `wheel_pack`); the index maps each pack to its wheel's name.
    packs = []
    for i, (name, src, data, digest) in enumerate(plan):
        if name.endswith(".whl"):
            if src is not None:
                packed = cached_pack(cache_root, src, digest, np_strip if name == np_name else ())
                plan[i] = (packed.name, packed, None, stamps.sha256(packed))
            else:
                packed_bytes = wheel_pack(data)
                plan[i] = (pack_name(name), None, packed_bytes, sha256_bytes(packed_bytes))
            packs.append({"name": plan[i][0], "wheel": name})
    # The boot bundle: the stdlib zip, the snapshot and the packs, one asset and so one Zstandard frame
    # (wrappers.py, whole-asset window).  The heap holds much of NumPy and of the stdlib again (their modules'
    # code objects and strings, the libraries' data), which the compressor then finds in the files beside it:
    # 8.4 → 6.4 MB shipped.  The unpacker inflates the frame and hands each part to the Python worker under its
    # own name, as it did the separate assets.
    bundle_name = None
    if snapshot_name:
        entry = {p[0]: p for p in plan}
        members = [("file", entry[STDLIB_NAME]), ("snapshot", entry[snapshot_name])] + [
            ("pack", entry[k["name"]]) for k in packs
        ]
        bundle_path, bundle_parts = boot_bundle(cache_root, members, loaded_modules)
        bundled = {name for _, (name, *_) in members}
        bundle_name = bundle_path.name
        plan = [p for p in plan if p[0] not in bundled] + [(bundle_name, bundle_path, None, stamps.sha256(bundle_path))]
    # Lazy assets: shipped like every other asset (the same wrapper scripts below) but marked `lazy` in the index,
    # so that no boot loads them; the worker asks for one when it needs it.  The optional packs (matplotlib & co.,
    # optional.py) are such assets; the index's `optional.packages` says which imports need which pack.
    optional = (
        optional_packs(
            cache_root,
            manifest,
            allow_download=allow_download,
            stamps=stamps,
            pyodide_dir=src_dir if compile_bytecode else None,
        )
        if optional_packages
        else []
    )
    lazy_files = {opt["pack"].name: opt["pack"] for opt in optional}
    lazy_files.update(lazy_assets or {})
    for opt in optional:
        info.optional_report[opt["name"]] = opt["report"]
    lazy = set()
    for name, path in lazy_files.items():
        plan.append((name, Path(path), None, stamps.sha256(Path(path))))
        lazy.add(name)
    lock_bytes = (json.dumps(trimmed_lock(manifest, extra_lock), sort_keys=True, separators=(",", ":")) + "\n").encode()
    plan.append((LOCK_NAME, None, lock_bytes, sha256_bytes(lock_bytes)))
    # Index order is boot order: file:// loads the wrapper scripts one after another in this order (http
    # fetches everything at once).  The tiny lock file is awaited when the boot ends (it came last, behind
    # 30 MB of wrappers), the boot bundle is inflated while the wasm still loads.  (Without a snapshot there is no
    # bundle: the stdlib comes after the wasm, the packs last.)
    first = ["pyodide.js", "pyodide.asm.js", LOCK_NAME, bundle_name or snapshot_name, "pyodide.asm.wasm", STDLIB_NAME]
    plan.sort(key=lambda p: first.index(p[0]) if p[0] in first else len(first))

    index_assets = []
    wanted = {INDEX_NAME, RUNTIME_JS_NAME}
    for name, src, data, digest in plan:
        # One shipped form per asset, for http and file:// alike: its wrapper scripts (wrappers.py).
        if src is None:  # generated at build time (small)
            payload, encoding = encode_payload(data)
            record = payload_record(data, payload, encoding)
            wraps = []
            for i, chunk in enumerate(wrapper_chunks(name, payload)):
                wraps.append(dest / wrapper_name(name, i))
                write_if_changed(wraps[-1], chunk)
        else:
            parts, record = cached_wrappers(cache_root, name, src, digest, stamps)
            wraps = []
            for part in parts:
                wraps.append(dest / part.name)
                copy_if_stale(part, wraps[-1])
        wsize = sum(w.stat().st_size for w in wraps)
        index_assets.append(
            {
                "name": name,
                **record,
                "wrappers": [w.name for w in wraps],
                "wrapper": wraps[0].name,
                "wrapperSize": wsize,
                **({"lazy": True} if name in lazy else {}),
                **({"parts": bundle_parts} if name == bundle_name else {}),
            }
        )
        info.asset_names.append(name)
        info.http_files += [w.name for w in wraps]
        wanted |= {w.name for w in wraps}
        if name in lazy:
            info.optional_bytes += wsize
        else:
            info.http_bytes += wsize
    info.file_protocol_files = list(info.http_files)
    info.file_bytes = info.http_bytes
    info.optional_file_bytes = info.optional_bytes

    # Remove what an earlier build wrote and this one does not (other attention_core versions, old wrappers).
    ours = (
        tuple(p[0] for p in plan)
        + ("attention_core-", SNAPSHOT_PREFIX, BUNDLE_PREFIX, STDLIB_NAME, np_name[: -len(".whl")])
        + tuple(spec["file_name"].split("-")[0] + "-" for spec in manifest.get("optional_packages", {}).values())
    )
    for old in dest.iterdir():
        if old.is_file() and old.name not in wanted and old.name.startswith(ours):
            old.unlink()

    index = {
        "version": version,
        "assets": index_assets,
        "packages": packages,
        "imports": imports,
        "snapshot": snapshot_entry,
        "env": SNAPSHOT_ENV,
        "packs": packs,
        "lockFile": LOCK_NAME,
        "wrapperChunkBytes": WRAPPER_CHUNK,
        "wrapperEncoding": WRAPPER_ENCODING,
        "optional": {
            "packages": {
                o["name"]: {
                    "pack": o["pack"].name,
                    "wheel": o["wheel"],
                    "imports": o["imports"],
                    "depends": o["depends"],
                }
                for o in optional
            }
        },
    }
    index_bytes = browser_data_script("python", "index", json.dumps(index, sort_keys=True, separators=(",", ":")))
    write_if_changed(dest / INDEX_NAME, index_bytes)
    info.http_bytes += len(index_bytes)
    info.file_bytes += len(index_bytes)
    info.files = [INDEX_NAME] + info.http_files
    stamps.save()
    if bundle:
        bundle_python_runtime(dest, root=project_root)
        info.files.insert(0, RUNTIME_JS_NAME)
    return info
