"""The one shipped form of every runtime asset, read over http and over file:// alike: classic scripts
`<name>.<i>.js`, each registering ≤ 512 KiB of the asset's *payload* (its bytes, Zstandard-compressed when that
saves ≥ 10 %) as a base-85 string literal (RFC 1924's alphabet, Python's `base64.b85encode`) in
`Course.python.assets["<name>/<i>"]`.

Why scripts: browsers block fetch/XHR/import()/Worker(url) on file:// but `<script src>` works; small chunks keep
every main-thread parse task short. Why base 85: +25 % instead of base64's +33 %, and still plain ASCII without
`"`, `\\` or line breaks, which Chromium parses off the main thread.

Over http the worker fetches the same files and decodes the literal straight from their bytes (browser/
transport.js: the characters between the first `]="` and the last `"`) — no second copy of any asset.  The
runtime index carries the sha256 of each payload: it is checked before the payload is inflated or used, on
both transports.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import zstandard

from .. import cache as cachestore
from ..bundle import browser_namespace
from .files import write_if_changed
from .verify import RuntimeAssetError, sha256_bytes

WRAPPER_CHUNK = 1 << 19
"""Payload bytes per wrapper script (the last one of an asset holds the rest; a multiple of 4, so each chunk
decodes alone).  Parsing one 640 KiB literal takes a few ms, so no main-thread task gets long on file://."""
WRAPPER_ENCODING = "b85"
MIN_SAVING = 0.10
"""An asset's payload is its Zstandard frame when that is at least this much smaller; otherwise the asset as it is."""
ZSTD_LEVEL = 19
"""Zstandard instead of gzip: the runtime's files come out ~25 % smaller at level 19 (the main wasm 3.1 → 2.4 MB,
NumPy's wheel 3.5 → 2.5 MB), and the browser's decoder (npm zstddec: zstd's own decompressor compiled to wasm,
browser/zstd.js) inflates about as fast as the native gzip DecompressionStream. One thread and a fixed level:
the same bytes on every machine."""
ZSTD_WINDOW_LOG = 27
"""Files over 8 MiB (level 19's own window) are compressed with a window covering the whole file (e.g. the main
wasm). The browser decodes a frame in one call, into a buffer of the indexed size, which needs no window buffer
of its own."""

_B85 = np.frombuffer(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~", np.uint8)


def b85_literal(data: bytes) -> bytes:
    """`base64.b85encode(data)` (no padding: a last group of n < 4 bytes is n + 1 characters), vectorised
    (the pure-Python one takes ~1 s per MB)."""
    full = len(data) - len(data) % 4
    words = np.frombuffer(data[:full], dtype=">u4").astype(np.uint64)
    digits = np.empty((len(words), 5), np.uint8)
    for k in range(4, -1, -1):
        digits[:, k] = words % 85
        words //= 85
    return _B85[digits].tobytes() + base64.b85encode(data[full:])


_B85_VALUE = np.full(256, 255, np.uint8)
_B85_VALUE[_B85] = np.arange(85, dtype=np.uint8)


def b85_bytes(text: bytes) -> bytes:
    """The inverse of `b85_literal` (what transport.js does), vectorised; refuses characters outside the alphabet."""
    full = len(text) - len(text) % 5
    values = _B85_VALUE[np.frombuffer(text[:full], np.uint8)]
    if (values == 255).any():
        raise ValueError("not base-85 text")
    groups = values.reshape(-1, 5).astype(np.uint64)
    words = (((groups[:, 0] * 85 + groups[:, 1]) * 85 + groups[:, 2]) * 85 + groups[:, 3]) * 85 + groups[:, 4]
    if (words > 0xFFFFFFFF).any():
        raise ValueError("base-85 group out of range")
    return words.astype(">u4").tobytes() + base64.b85decode(text[full:])


def _store_prefix(name: str) -> bytes:
    key = json.dumps(name)[:-1]  # '"name' — the closing quote comes after "/<i>"
    return f"(function(p){{(p.assets=p.assets||{{}})[{key}".encode()


_SUFFIX = f'"}})({browser_namespace("python")});\n'.encode()
assert _SUFFIX.count(b'"') == 1, "the literal ends at the file's last quote (transport.js relies on it)"


def wrapper_chunks(name: str, payload: bytes, chunk: int = WRAPPER_CHUNK) -> list[bytes]:
    """The wrapper scripts of one payload: script i registers `Course.python.assets["<name>/<i>"]`."""
    assert chunk % 4 == 0
    store = _store_prefix(name)
    return [
        store + f'/{i}"]="'.encode() + b85_literal(payload[off : off + chunk]) + _SUFFIX
        for i, off in enumerate(range(0, max(len(payload), 1), chunk))
    ]


def wrapper_payload(script: bytes) -> bytes:
    """The payload bytes one wrapper script carries (what transport.js does in the browser)."""
    start = script.index(b']="') + 3
    return b85_bytes(script[start : script.rindex(b'"')])


def wrapper_name(name: str, i: int) -> str:
    return f"{name}.{i}.js"


def encode_payload(data: bytes) -> tuple[bytes, str | None]:
    """(payload, encoding): the Zstandard frame of `data` (its size in the header) if that saves enough, else `data`."""
    window = {"window_log": ZSTD_WINDOW_LOG} if len(data) > 1 << 23 else {}
    params = zstandard.ZstdCompressionParameters.from_level(
        ZSTD_LEVEL, source_size=len(data), write_content_size=1, threads=0, **window
    )
    packed = zstandard.ZstdCompressor(compression_params=params).compress(data)
    if len(packed) <= len(data) * (1 - MIN_SAVING):
        return packed, "zstd"
    return data, None


def decode_payload(payload: bytes, encoding: str | None) -> bytes:
    return zstandard.ZstdDecompressor().decompress(payload) if encoding == "zstd" else payload


def read_asset(folder: Path, entry: dict) -> bytes:
    """An asset's bytes as the browser ends up with them, from its wrapper scripts in `folder` and its runtime
    index entry (tests, tools)."""
    payload = b"".join(wrapper_payload((folder / w).read_bytes()) for w in entry["wrappers"])
    if sha256_bytes(payload) != entry["sha256"]:
        raise RuntimeAssetError(
            f"{folder}/{entry['wrappers'][0]}: sha256 {sha256_bytes(payload)}, expected {entry['sha256']}",
            expected=entry["sha256"],
            actual=sha256_bytes(payload),
        )
    return decode_payload(payload, entry.get("encoding"))


def payload_record(data: bytes, payload: bytes, encoding: str | None) -> dict:
    return {"size": len(payload), "sha256": sha256_bytes(payload), "encoding": encoding, "decodedSize": len(data)}


def _wrapper_code() -> str:
    """What decides a wrapper's text besides the file: this module's code, the namespace it registers in and the
    Zstandard library that compresses it (part of the cache folder's name)."""
    return cachestore.digest(cachestore.code_digest(__file__), _SUFFIX, zstandard.__version__)[:16]


def _cached(folder: Path, name: str, digest: str) -> tuple[list[Path], dict] | None:
    try:
        record = json.loads((folder / "chunks.json").read_text("utf-8"))
        parts = [folder / wrapper_name(name, i) for i in range(record["count"])]
        if record.get("src") == digest and all(p.is_file() for p in parts):
            return parts, record["payload"]
    except (OSError, ValueError, KeyError):
        pass
    return None


def wrappers_cached(cache_root: Path, name: str, src: Path) -> bool:
    """Whether `cached_wrappers` would find the wrappers of `src` made (and not compress anything)."""
    digest = sha256_bytes(src.read_bytes())
    return _cached(cache_root / "wrappers" / f"{name}.{digest[:16]}.{_wrapper_code()}", name, digest) is not None


def cached_wrappers(cache_root: Path, name: str, src: Path) -> tuple[list[Path], dict]:
    """The wrapper scripts of the file `src` shipped as `name`, and their record {"size", "sha256", "encoding",
    "decodedSize"} (of the payload), made once into the cache under the file's sha256 (zstd -19 of the main wasm
    takes seconds): a moved or copied checkout finds them again."""
    data = src.read_bytes()
    digest = sha256_bytes(data)
    folder = cache_root / "wrappers" / f"{name}.{digest[:16]}.{_wrapper_code()}"
    done = folder / "chunks.json"
    found = _cached(folder, name, digest)
    if found is not None:
        return found
    payload, encoding = encode_payload(data)
    record = payload_record(data, payload, encoding)
    folder.mkdir(parents=True, exist_ok=True)
    chunks = wrapper_chunks(name, payload)
    parts = [folder / wrapper_name(name, i) for i in range(len(chunks))]
    for part, chunk in zip(parts, chunks):
        write_if_changed(part, chunk)
    write_if_changed(done, json.dumps({"count": len(chunks), "payload": record, "src": digest}).encode())
    return parts, record
