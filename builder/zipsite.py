"""Offline package: the built site as one deterministic zip, `dist/attention-course.zip`.

Unzipped anywhere, `attention-course/index.html` opens the whole course from disk (file://): every link is
relative and the Python runtime has its file:// path. The same site gives the same bytes: entries are
sorted, every timestamp is 1980-01-01 00:00, permissions are fixed (0644 files, 0755 folders), and no
extra fields (no uid/gid, no extended timestamps) are written.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

ZIP_NAME = "attention-course"
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
STORED_SUFFIXES = {".woff2", ".wasm", ".zip", ".whl", ".pack", ".snap", ".png", ".jpg"}  # already compressed


def _entry(name: str, is_dir: bool, compress: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.create_system = 3  # unix, so the permission bits below are honoured
    info.external_attr = ((0o40755 if is_dir else 0o100644) << 16) | (0x10 if is_dir else 0)
    info.compress_type = zipfile.ZIP_DEFLATED if compress and not is_dir else zipfile.ZIP_STORED
    return info


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
        for name, path in entries:
            if path is None:
                archive.writestr(_entry(name, True, False), b"")
            else:
                info = _entry(name, False, path.suffix not in STORED_SUFFIXES)
                archive.writestr(info, path.read_bytes(), compresslevel=6)
    os.replace(tmp, zip_path)
    return zip_path
