"""The one shipped form of every runtime asset, read over http and over file:// alike: classic scripts
`<name>.<i>.js`, each registering ≤ 512 KiB of the asset's *payload* (its bytes, gzip-compressed when that
saves ≥ 10 %) as a string literal in `Course.python.assets["<name>/<i>"]`.

Why scripts: Chromium blocks fetch/XHR/import()/Worker(url) on file:// but `<script src>` works; small
chunks keep every main-thread parse task short (a single 13 MB literal took ~200 ms).  Why not base64 (the
previous form, shipped next to a binary copy for http: 59 MB of site): the literal holds the payload bytes
themselves, one source byte per byte, decoded by the page as `x-user-defined` (`<script charset>`; bytes
0x00–0x7F → U+0000–U+007F, 0x80–0xFF → U+F780–U+F7FF, so `charCodeAt(i) & 0xFF` is the byte).  Only four
bytes are escaped inside the literal (`\\`, `"`, LF, CR: +1.6 % on compressed data, base64 costs +33 %).

Over http the worker fetches the same files and reads the payload straight from their bytes (theme/js/python/
transport.js: the literal between the first `]="` and the last `"`, with the four escapes undone) — no
second copy of any asset.  The runtime index carries the sha256 of each payload: it is checked before the
payload is inflated or used, on both transports.
"""
from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from builder.bundle import browser_namespace

from .files import write_if_changed
from .verify import HashStamps, RuntimeAssetError, sha256_bytes

WRAPPER_FORMAT = "course-xud1"  # part of the cache folder's name: change it whenever a wrapper's text changes
WRAPPER_CHUNK = 1 << 19
"""Payload bytes per wrapper script (the last one of an asset holds the rest).  Parsing one 512 KiB literal
takes a few ms, so no main-thread task gets long on file://."""
WRAPPER_CHARSET = "x-user-defined"
"""The `<script charset>` the page loads wrappers with (file://): every byte maps to one UTF-16 code unit."""
GZIP_MIN_SAVING = 0.10
"""An asset's payload is its gzip (level 9) when that is at least this much smaller; otherwise the asset as it is
(the stdlib zip, the gzip snapshot and wheel packs hardly shrink)."""

_ESCAPES = {0x5C: b"\\\\", 0x22: b'\\"', 0x0A: b"\\n", 0x0D: b"\\r"}
_ESCAPE_RE = re.compile(rb'[\\"\n\r]')
_UNESCAPE_RE = re.compile(rb"\\(.)", re.S)
_UNESCAPES = {b"\\": b"\\", b'"': b'"', b"n": b"\n", b"r": b"\r"}


def escape_literal(data: bytes) -> bytes:
    """`data` as the inside of a double-quoted JS string literal, read byte for byte (x-user-defined)."""
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group()[0]], data)


def unescape_literal(text: bytes) -> bytes:
    return _UNESCAPE_RE.sub(lambda m: _UNESCAPES[m.group(1)], text)


def _store_prefix(name: str) -> bytes:
    key = json.dumps(name)[:-1]  # '"name' — the closing quote comes after "/<i>"
    return f"(function(p){{(p.assets=p.assets||{{}})[{key}".encode()


_SUFFIX = f'"}})({browser_namespace("python")});\n'.encode()
assert _SUFFIX.count(b'"') == 1, "the literal ends at the file's last quote (transport.js relies on it)"


def wrapper_chunks(name: str, payload: bytes, chunk: int = WRAPPER_CHUNK) -> list[bytes]:
    """The wrapper scripts of one payload: script i registers `Course.python.assets["<name>/<i>"]`."""
    store = _store_prefix(name)
    return [store + f'/{i}"]="'.encode() + escape_literal(payload[off:off + chunk]) + _SUFFIX
            for i, off in enumerate(range(0, max(len(payload), 1), chunk))]


def wrapper_payload(script: bytes) -> bytes:
    """The payload bytes one wrapper script carries (what transport.js does in the browser)."""
    start = script.index(b']="') + 3
    return unescape_literal(script[start:script.rindex(b'"')])


def wrapper_name(name: str, i: int) -> str:
    return f"{name}.{i}.js"


def encode_payload(data: bytes) -> tuple[bytes, str | None]:
    """(payload, encoding): gzip of `data` (deterministic: no name, mtime 0) if that saves enough, else `data`."""
    packed = gzip.compress(data, compresslevel=9, mtime=0)
    if len(packed) <= len(data) * (1 - GZIP_MIN_SAVING):
        return packed, "gzip"
    return data, None


def decode_payload(payload: bytes, encoding: str | None) -> bytes:
    return gzip.decompress(payload) if encoding == "gzip" else payload


def read_asset(folder: Path, entry: dict) -> bytes:
    """An asset's bytes as the browser ends up with them, from its wrapper scripts in `folder` and its runtime
    index entry (tests, tools)."""
    payload = b"".join(wrapper_payload((folder / w).read_bytes()) for w in entry["wrappers"])
    if sha256_bytes(payload) != entry["sha256"]:
        raise RuntimeAssetError(f"{folder}/{entry['wrappers'][0]}: sha256 {sha256_bytes(payload)}, expected {entry['sha256']}",
                                expected=entry["sha256"], actual=sha256_bytes(payload))
    return decode_payload(payload, entry.get("encoding"))


def payload_record(data: bytes, payload: bytes, encoding: str | None) -> dict:
    return {"size": len(payload), "sha256": sha256_bytes(payload), "encoding": encoding, "decodedSize": len(data)}


def cached_wrappers(cache_root: Path, name: str, src: Path, digest: str, stamps: HashStamps) -> tuple[list[Path], dict]:
    """The wrapper scripts of the verified asset file `src` and their
    record {"size", "sha256", "encoding", "decodedSize"} (of the payload), built once into the cache (gzip -9
    of the 10 MB wasm costs ~1 s)."""
    folder = cache_root / "wrappers" / f"{name}.{digest[:16]}.{WRAPPER_CHUNK}.{WRAPPER_FORMAT}"
    done = folder / "chunks.json"
    try:
        record = json.loads(done.read_text("utf-8"))
        parts = [folder / wrapper_name(name, i) for i in range(record["count"])]
        if stamps.get(done, "src") == digest and all(p.is_file() for p in parts):
            return parts, record["payload"]
    except (OSError, ValueError, KeyError):
        pass
    data = src.read_bytes()
    actual = sha256_bytes(data)
    if actual != digest:  # changed since it was hashed a moment ago
        raise RuntimeAssetError(f"{src}: changed while building its wrapper (sha256 {actual}, expected {digest})",
                                file=src, expected=digest, actual=actual)
    payload, encoding = encode_payload(data)
    record = payload_record(data, payload, encoding)
    folder.mkdir(parents=True, exist_ok=True)
    chunks = wrapper_chunks(name, payload)
    parts = [folder / wrapper_name(name, i) for i in range(len(chunks))]
    for part, chunk in zip(parts, chunks):
        write_if_changed(part, chunk)
    write_if_changed(done, json.dumps({"count": len(chunks), "payload": record}).encode())
    stamps.put(done, src=digest)
    return parts, record
