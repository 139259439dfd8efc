"""The file:// wrappers: each asset as classic scripts `<name>.<i>.js`, each registering ≤ 512 KB of its
bytes as base64 in `Course.python.assets["<name>/<i>"]` — Chromium blocks fetch/XHR/import()/Worker(url) on
file:// but `<script src>` works, and small chunks keep every main-thread parse task short."""
from __future__ import annotations

import base64
import json
from pathlib import Path

from builder.bundle import browser_namespace

from .files import write_if_changed
from .verify import HashStamps, RuntimeAssetError, sha256_bytes

WRAPPER_FORMAT = "course-global"  # part of the cache folder's name: change it whenever a wrapper's text changes
WRAPPER_CHUNK = 1 << 19
"""Base64 characters per file:// wrapper script: parsing one 512 KB string literal takes a few ms, so no
main-thread task gets long (a single 13 MB literal took ~200 ms).  A multiple of 4: each chunk decodes alone."""


def wrapper_chunks(name: str, data: bytes, chunk: int = WRAPPER_CHUNK) -> list[bytes]:
    """The file:// wrapper scripts of one asset: chunk i registers `Course.python.assets["<name>/<i>"]` = base64."""
    assert chunk % 4 == 0
    b64 = base64.b64encode(data)
    key = json.dumps(name)[:-1]  # '"name' — the closing quote comes after "/<i>"
    store = f"(function(p){{(p.assets=p.assets||{{}})[{key}".encode()
    return [store + f'/{i}"]="'.encode() + b64[off:off + chunk] + f'"}})({browser_namespace("python")});\n'.encode()
            for i, off in enumerate(range(0, max(len(b64), 1), chunk))]


def wrapper_name(name: str, i: int) -> str:
    return f"{name}.{i}.js"


def cached_wrappers(cache_root: Path, name: str, src: Path, digest: str, stamps: HashStamps) -> list[Path]:
    """The file:// wrapper chunks of a verified asset, built once into the cache (base64 of 16 MB costs ~0.1 s)."""
    folder = cache_root / "wrappers" / f"{name}.{digest[:16]}.{WRAPPER_CHUNK}.{WRAPPER_FORMAT}"
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
        write_if_changed(part, chunk)
    write_if_changed(done, json.dumps({"count": len(chunks)}).encode())
    stamps.put(done, src=digest)
    return parts
