"""The memory snapshot: the heap of a booted interpreter (NumPy imported) that the browser restores instead of
starting CPython.  It is made by `snapshot.cjs` (beside this module) under Node, and shipped sparse
(`pack_snapshot`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .node import node_job
from .precompile import SITE_PACKAGES, WARM_IMPORTS
from .verify import sha256_bytes

PROGRAM_DIR = Path(__file__).resolve().parent  # snapshot.cjs
SNAPSHOT_VERSION = "9"  # bump when snapshot.cjs or the file format changes: the cache key includes it
SNAPSHOT_MAGIC = b"CSN1"
SNAPSHOT_PAGE = 4096
SNAPSHOT_PREFIX = "python-snapshot-"
# The worker passes the same env to loadPyodide. A fixed hash secret: the heap (dicts, sets, interned strings) is
# then the same on every machine; every visitor restores that one heap anyway.
SNAPSHOT_ENV = {"HOME": "/home/pyodide", "PYTHONHASHSEED": "0"}
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


def pack_snapshot(heap: bytes) -> bytes:
    """Pyodide's snapshot (~36 MB, a third of it all-zero 4 KiB pages) as a sparse stream: `CSN1`, uint32 LE
    size, uint32 LE page count n, n uint32 LE indices of the non-zero pages, then those pages.  The transport
    compresses it (wrappers.py); the worker lays the pages into a zeroed buffer.  Deterministic."""
    size, page = len(heap), SNAPSHOT_PAGE
    pages = [i for i in range(0, (size + page - 1) // page) if heap[i * page : (i + 1) * page].strip(b"\0")]
    parts = [
        SNAPSHOT_MAGIC,
        size.to_bytes(4, "little"),
        len(pages).to_bytes(4, "little"),
        b"".join(i.to_bytes(4, "little") for i in pages),
    ]
    parts += [heap[i * page : (i + 1) * page] for i in pages]
    return b"".join(parts)


def wasm_data_segment(wasm: bytes) -> bytes:
    """The one active data segment of Pyodide's main module (placed at the memory base when it is instantiated)."""

    def leb(i: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            byte = wasm[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value, i

    i = 8
    while i < len(wasm):
        section, size_at = wasm[i], i + 1
        size, i = leb(size_at)
        if section == 11:  # data
            count, j = leb(i)
            flag, j = leb(j)
            end = wasm.index(b"\x0b", j)  # the offset expression (global.get $__memory_base) ends at `end`
            if count != 1 or flag != 0 or end - j > 8:
                raise ValueError("pyodide.asm.wasm: not one active data segment at the memory base")
            length, j = leb(end + 1)
            return wasm[j : j + length]
        i += size
    raise ValueError("pyodide.asm.wasm: no data section")


def xor_data_segment(snapshot: bytes, segment: bytes, at: int) -> bytes:
    """`snapshot` with `segment` XORed in at byte `at`: the interpreter's static data as the wasm initialises it
    becomes zeros where the snapshot still has it (~900 pages are untouched), which the sparse form then drops and
    the rest compresses the better for (−1.1 MB of the shipped snapshot).  Its own inverse."""
    region = np.frombuffer(snapshot, np.uint8, len(segment), at) ^ np.frombuffer(segment, np.uint8)
    return snapshot[:at] + region.tobytes() + snapshot[at + len(segment) :]


def unpack_snapshot(raw: bytes) -> bytes:
    """Inverse of `pack_snapshot` (tests and tools; the data segment stays XORed: `xor_data_segment`)."""
    if raw[:4] != SNAPSHOT_MAGIC:
        raise ValueError("not a packed memory snapshot")
    size, n = int.from_bytes(raw[4:8], "little"), int.from_bytes(raw[8:12], "little")
    heap = bytearray(size)
    off = 12 + 4 * n
    for k in range(n):
        i = int.from_bytes(raw[12 + 4 * k : 16 + 4 * k], "little")
        chunk = raw[off : off + min(SNAPSHOT_PAGE, size - i * SNAPSHOT_PAGE)]
        heap[i * SNAPSHOT_PAGE : i * SNAPSHOT_PAGE + len(chunk)] = chunk
        off += len(chunk)
    return bytes(heap)


def memory_snapshot(
    cache_root: Path,
    pyodide_js_dir: Path,
    stdlib: tuple[Path, str],
    numpy_pack: tuple[Path, str],
    pyodide_sha: str,
    warm_imports: str = WARM_IMPORTS,
    *,
    theme_python_dir: Path,
) -> tuple[Path, dict] | None:
    """The sparse memory snapshot for this exact (Pyodide, stdlib zip, NumPy pack), cached by their sha256,
    and its `dynlibs` record (see above) for the runtime index.

    `stdlib`/`numpy_pack` are the shipped files and their sha256; `pyodide_sha` identifies pyodide.asm.wasm;
    `theme_python_dir` (theme/js/python/) holds the cell executor and the browser's pack installer.
    Returns (`<cache>/snapshot/<key>/python-snapshot-<key>.snap`, dynlibs), or None (with a warning) when
    Node or the snapshot fails: the browser then boots CPython from scratch, which works, just slower.
    """
    warm = ", ".join([warm_imports, SNAPSHOT_EXTRA_IMPORTS])
    course_runtime = theme_python_dir / "course_runtime.py"
    key = sha256_bytes(
        f"{pyodide_sha} {stdlib[1]} {numpy_pack[1]} {SNAPSHOT_VERSION} {warm} "
        f"{json.dumps(SNAPSHOT_ENV, sort_keys=True)} "
        f"{sha256_bytes(course_runtime.read_bytes())}".encode()
    )[:16]
    out_dir = cache_root / "snapshot" / key
    out = out_dir / f"{SNAPSHOT_PREFIX}{key}.snap"
    meta = out_dir / f"{SNAPSHOT_PREFIX}{key}.json"
    if out.is_file() and meta.is_file():
        return out, json.loads(meta.read_text("utf-8"))

    def finish(folder: Path) -> None:  # Pyodide's snapshot → the sparse form the browser downloads
        raw = folder / (out.name + ".raw")
        made = json.loads((folder / (out.name + ".json")).read_text("utf-8"))
        snapshot = raw.read_bytes()
        segment = wasm_data_segment((pyodide_js_dir / "pyodide.asm.wasm").read_bytes())
        # Pyodide's snapshot: a header of `header` bytes (its second word), then the memory, where the interpreter's
        # static data starts at the memory base
        at = int.from_bytes(snapshot[4:8], "little") + made["memoryBase"]
        made["dataXor"] = {"at": at, "size": len(segment)}
        (folder / out.name).write_bytes(pack_snapshot(xor_data_segment(snapshot, segment, at)))
        raw.unlink()
        (folder / (out.name + ".json")).unlink()
        (folder / meta.name).write_text(json.dumps(made), "utf-8")

    # packs.js is an ES module in a package without "type": "module": Node imports it as .mjs
    made = node_job(
        out_dir,
        PROGRAM_DIR / "snapshot.cjs",
        [
            str(pyodide_js_dir.resolve()),
            str(stdlib[0].resolve()),
            str(numpy_pack[0].resolve()),
            f"{{out}}/{out.name}",
            SITE_PACKAGES,
            warm,
            json.dumps(SNAPSHOT_ENV),
            str(course_runtime),
            COURSE_DIR,
            "{tmp}/packs.mjs",
        ],
        "no Python memory snapshot (each boot starts CPython from scratch)",
        finish,
        files={"packs.mjs": (theme_python_dir / "packs.js").read_text("utf-8")},
    )
    return (out, json.loads(meta.read_text("utf-8"))) if made else None
