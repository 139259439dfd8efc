"""Is every runtime file the declared one? sha256 helpers, the hash stamps and the manifest.

Every copied file is checked against `manifest.json` (beside this module: sha256 + size); any
mismatch is a `RuntimeAssetError` naming the file, both hashes and the fix.  Hashes of unchanged files are
remembered in `<cache_dir>/pyodide/hash-stamps.json` keyed by (size, mtime_ns), so a warm build re-hashes
nothing; a file whose size or mtime changed is re-hashed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .files import write_atomically

MANIFEST_PATH = Path(__file__).resolve().parent / "manifest.json"
STAMP_NAME = "hash-stamps.json"


class RuntimeAssetError(RuntimeError):
    """An asset is missing or its bytes are not the declared ones."""

    def __init__(
        self, message: str, *, file: str | Path | None = None, expected: str | None = None, actual: str | None = None
    ) -> None:
        super().__init__(message)
        self.file = str(file) if file is not None else None
        self.expected = expected
        self.actual = actual


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class HashStamps:
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
            write_atomically(self.path, json.dumps(self.data, indent=0, sort_keys=True).encode("utf-8"))
            self.dirty = False


def load_manifest(path: Path = MANIFEST_PATH) -> dict:
    return json.loads(path.read_text("utf-8"))


def pyodide_fix_hint(pyodide_dir: Path | None) -> str:
    if pyodide_dir is not None:
        return (
            f"point --pyodide-dir at an unmodified official Pyodide 0.27.7 distribution "
            f"(got {pyodide_dir}), or drop it to use node_modules/pyodide"
        )
    return "run `npm ci` to restore node_modules/pyodide (pyodide@0.27.7 from package-lock.json)"
