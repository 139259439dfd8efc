"""Offline package: the built site as one deterministic zip, `dist/attention-course.zip`.

Unzipped anywhere, `attention-course/index.html` opens the whole course from disk (file://): every link is
relative and the Python runtime has its file:// path. The same site gives the same bytes: entries are
sorted, every timestamp is 1980-01-01 00:00, permissions are fixed (0644 files, 0755 folders), and no
extra fields (no uid/gid, no extended timestamps) are written.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterable
from pathlib import Path

ZIP_NAME = "attention-course"
ZIP_COMMENT = b"offline package written by the course's build (python build.py --zip); it replaces only its own"
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
STORED_SUFFIXES = {".woff2", ".wasm", ".zip", ".whl", ".pack", ".snap", ".png", ".jpg"}  # already compressed


def _entry(name: str, is_dir: bool, compress: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.create_system = 3  # unix, so the permission bits below are honoured
    info.external_attr = ((0o40755 if is_dir else 0o100644) << 16) | (0x10 if is_dir else 0)
    info.compress_type = zipfile.ZIP_DEFLATED if compress and not is_dir else zipfile.ZIP_STORED
    return info


def made_by_build(path: Path, top: str = ZIP_NAME) -> bool:
    """Is `path` an offline package a build wrote (its comment; or, from before the comment, one top folder `top/`
    holding index.html and nothing else beside it)?"""
    try:
        with zipfile.ZipFile(path) as archive:
            if archive.comment == ZIP_COMMENT:
                return True
            names = archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False
    return f"{top}/index.html" in names and all(n.startswith(f"{top}/") for n in names)


def zip_refusal(dist: Path, top: str, protected: Iterable[tuple[str, Path, bool]]) -> str | None:
    """Why `--zip` must not write `<dist>/<top>.zip`, or None: `dist` may not be or lie inside the sources, the
    cache or the site (`protected`: (what, folder, may hold it) as builder/output.py's `refusal`), and an existing
    `<top>.zip` is replaced only when a build wrote it."""
    dist = Path(os.path.abspath(dist)).resolve()
    for what, folder, may_hold in protected:
        folder = folder.resolve()
        if not may_hold and (dist == folder or dist.is_relative_to(folder)):
            return f"it {'is' if dist == folder else 'lies inside'} the {what} ({folder}); put the zip elsewhere"
    ancestor = dist
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{ancestor} is a file, not a folder"
    target = dist / f"{top}.zip"
    if target.is_dir() or target.is_symlink():
        return f"{target} is a {'folder' if target.is_dir() else 'symbolic link'}, not an offline package"
    if target.exists() and not made_by_build(target, top):
        return (
            f"{target} exists and no build wrote it: the build replaces only an offline package it made; move the "
            "file away or choose another --dist"
        )
    return None


def zip_site(site_dir: Path, zip_path: Path, top: str = ZIP_NAME) -> Path:
    """Write `site_dir` into `zip_path` under one top folder `top/`; returns the zip path."""
    site_dir = site_dir.resolve()
    if not (site_dir / "index.html").is_file():
        raise FileNotFoundError(f"{site_dir}/index.html not found: build the site first")
    entries: list[tuple[str, Path | None]] = [(f"{top}/", None)]
    for folder, dirs, names in os.walk(site_dir):
        dirs.sort()
        rel = Path(folder).relative_to(site_dir).as_posix()
        prefix = f"{top}/" if rel == "." else f"{top}/{rel}/"
        if rel != ".":
            entries.append((prefix, None))
        entries.extend((prefix + name, Path(folder) / name) for name in names)
    entries.sort(key=lambda e: e[0])
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = zip_path.with_name(zip_path.name + ".part")
    with zipfile.ZipFile(tmp, "w") as archive:
        archive.comment = ZIP_COMMENT
        for name, path in entries:
            if path is None:
                archive.writestr(_entry(name, True, False), b"")
            else:
                info = _entry(name, False, path.suffix not in STORED_SUFFIXES)
                archive.writestr(info, path.read_bytes(), compresslevel=6)
    os.replace(tmp, zip_path)
    return zip_path
