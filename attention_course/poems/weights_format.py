"""One compact file format for a model's weights, written here and read both here and by the browser
(attention_course/poems/tiny_gpt.js `decodeWeights`): a list of tensors (the layout, JSON) and one blob of bytes.

Each tensor is stored in one of three encodings:

* `float32`: little-endian float32, as is (vectors: norm gains, biases — a few KB in all);
* `float16`: little-endian IEEE half precision;
* `int8-rows`: a 2-D matrix as int8 with one float32 scale per row: row ≈ q · scale, scale = max|row| / 127
  (a zero row gets scale 1). Dequantising is one multiply per weight.

The blob holds every float32 section first, then the float16 ones, then the int8 ones, so each section starts at
an offset that is a multiple of its element size. In the browser the blob arrives as base64 inside a classic
script (pages work from file://, so nothing is fetched).
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

FORMAT = "course-weights/1"
ENCODINGS = ("float32", "float16", "int8-rows")


def quantise_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 values, float32 scale per row) of a 2-D array."""
    a = np.asarray(a, dtype=np.float32)
    peak = np.abs(a).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(a / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


def encoding_for(name: str, shape: tuple[int, ...], matrices: str) -> str:
    """Vectors stay float32; matrices get `matrices` (one of ENCODINGS)."""
    return "float32" if len(shape) < 2 else matrices


def pack(params: dict[str, np.ndarray], order: list[str], *, matrices: str = "int8-rows") -> tuple[bytes, list[dict]]:
    """The blob and its layout: [{name, shape, encoding, offset, (scales)}] in `order`."""
    if matrices not in ENCODINGS:
        raise ValueError(f"matrices must be one of {ENCODINGS}, got {matrices!r}")
    sections: dict[str, list[tuple[dict, str, bytes]]] = {"f32": [], "f16": [], "i8": []}
    layout = []
    for name in order:
        a = np.asarray(params[name], dtype=np.float32)
        enc = encoding_for(name, a.shape, matrices)
        entry: dict[str, Any] = {"name": name, "shape": list(a.shape), "encoding": enc}
        layout.append(entry)
        if enc == "float32":
            sections["f32"].append((entry, "offset", a.astype("<f4").tobytes()))
        elif enc == "float16":
            sections["f16"].append((entry, "offset", a.astype("<f2").tobytes()))
        else:
            q, scale = quantise_rows(a.reshape(a.shape[0], -1))
            sections["f32"].append((entry, "scales", scale.astype("<f4").tobytes()))
            sections["i8"].append((entry, "offset", q.tobytes()))
    blob = bytearray()
    for kind in ("f32", "f16", "i8"):
        for entry, key, data in sections[kind]:
            entry[key] = len(blob)
            blob += data
    return bytes(blob), layout


def unpack(blob: bytes, layout: list[dict]) -> dict[str, np.ndarray]:
    """float32 arrays from the blob (what the browser computes with, too)."""
    out = {}
    for e in layout:
        shape = tuple(e["shape"])
        n = int(np.prod(shape))
        if e["encoding"] == "float32":
            a = np.frombuffer(blob, dtype="<f4", count=n, offset=e["offset"])
        elif e["encoding"] == "float16":
            a = np.frombuffer(blob, dtype="<f2", count=n, offset=e["offset"])
        elif e["encoding"] == "int8-rows":
            q = np.frombuffer(blob, dtype=np.int8, count=n, offset=e["offset"]).reshape(shape[0], -1)
            scale = np.frombuffer(blob, dtype="<f4", count=shape[0], offset=e["scales"])
            a = q.astype(np.float32) * scale[:, None]
        else:
            raise ValueError(f"{e['name']}: unknown encoding {e['encoding']!r}")
        out[e["name"]] = np.array(a, dtype=np.float32).reshape(shape)
    return out


def browser_payload(blob: bytes, layout: list[dict], **extra: Any) -> dict[str, Any]:
    """What the page embeds (JSON): the format, the layout, anything in `extra` (config, vocabulary), and the
    blob as base64."""
    return {"format": FORMAT, **extra, "layout": layout, "data": base64.b64encode(blob).decode("ascii")}


__all__ = ["ENCODINGS", "FORMAT", "browser_payload", "pack", "quantise_rows", "unpack"]
