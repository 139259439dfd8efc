"""Wheels: a course's browser package as a deterministic pure-Python wheel, and Pyodide's wheels repacked
without the files no cell can use (the manifest's `strip` globs), stored uncompressed (the transport compresses
each file as one Zstandard frame, which beats per-member deflate)."""

from __future__ import annotations

import ast
import base64
import fnmatch
import hashlib
import io
import re
import zipfile
from pathlib import Path

from .verify import RuntimeAssetError

_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_WHEEL_EXTS = {".py", ".pyi", ".typed", ".json", ".txt", ".csv"}


def package_imports(package_dir: Path) -> list[str]:
    """The absolute imports of a pure-Python package's modules (not itself, not `__future__`), sorted.

    The stdlib modules among them are imported by the bytecode compile's first cell (precompile.py), so that
    they ship compiled; read with `ast`, so the key changes only when the imports do, not with every edit."""
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


def package_version(package_dir: Path) -> str:
    """A browser package's version: its `__version__`, else 0.1.0."""
    init = package_dir / "__init__.py"
    if init.is_file():
        m = re.search(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", init.read_text("utf-8"), re.M)
        if m:
            return m.group(1)
    return "0.1.0"


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel_bytes(
    package_dir: Path,
    *,
    version: str,
    dist_name: str | None = None,
    requires: tuple[str, ...] = (),
    extra: dict[str, bytes] | None = None,
) -> tuple[str, bytes]:
    """A deterministic pure-Python wheel of `package_dir` → (file name, bytes).

    Packs .py/.pyi/py.typed (and small .json/.txt/.csv data files) sorted by path, with a fixed timestamp, and the
    `extra` files (path inside the package → bytes: data the build made for it).
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
    taken = {name for name, _ in files}
    for rel, data in sorted((extra or {}).items()):
        name = f"{pkg}/{rel}"
        if name in taken or rel.startswith(("/", "..")) or ".." in rel.split("/"):
            raise RuntimeAssetError(f"{package_dir}: a made file may not replace a file or leave the package: {rel}")
        files.append((name, data))
    if not any(n.endswith(".py") for n, _ in files):
        raise RuntimeAssetError(f"{package_dir}: no .py files to pack into a wheel", file=package_dir)

    di = f"{wheel_dist}-{version}.dist-info"
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {dist}",
        f"Version: {version}",
        f"Summary: {pkg}, shipped to the browser's Python by the course",
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


def stripped(path: str, globs) -> bool:
    """Is `path` one of the files a repacked wheel leaves out (the manifest's `strip` globs)?"""
    return any(fnmatch.fnmatchcase(path, g) for g in globs)


def wheel_files(data: bytes, strip: tuple[str, ...] = ()) -> list[tuple[str, bytes]]:
    """A wheel's files in archive order, less the `strip` globs."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return [(i.filename, zf.read(i)) for i in zf.infolist() if not i.is_dir() and not stripped(i.filename, strip)]


def stored_zip(files: list[tuple[str, bytes]]) -> bytes:
    """`files` as a zip with every member stored, fixed timestamps: the same bytes every time."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in files:
            zi = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            zi.compress_type = zipfile.ZIP_STORED
            zi.external_attr = 0o100644 << 16
            zi.create_system = 3
            zf.writestr(zi, data)
    return buf.getvalue()
