"""Autocomplete data for the code cells: the public API of the installed NumPy and of the course's browser packages.

Generated at build time by walking the real modules, so the editor can list `np.` members with their
signatures and first docstring line instantly, before Python has loaded in the browser. The result is
emitted as `assets/numpy-completions.js`, a classic script setting `Course.editor.completions`
(a script, not JSON, because fetch() is blocked on file://), and kept in the build cache keyed by the
NumPy version, the browser packages' sources and this file's own source.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

from ..bundle import browser_data_script
from ..cache import cached, digest, open_cache

# module path → how the reader usually reaches it (aliases are resolved in the browser)
MODULES = ["numpy", "numpy.linalg", "numpy.random", "numpy.fft"]
# classes whose instances readers use a lot: `rng = np.random.default_rng(0)` → `rng.`
CLASSES = {"numpy.random.Generator": ("numpy.random", "Generator"), "numpy.ndarray": ("numpy", "ndarray")}
MAX_DOC = 140
MAX_SIG = 160
_ADDRESS_RE = re.compile(r" at 0x[0-9a-fA-F]+")


def _first_doc_line(obj: Any, name: str) -> str:
    """The docstring's summary line, skipping a leading call signature (ufuncs, C functions) and RST markup."""
    paragraphs = [p.strip() for p in (inspect.getdoc(obj) or "").strip().split("\n\n")]
    if paragraphs and paragraphs[0].startswith(name + "("):
        paragraphs = paragraphs[1:]
    for para in paragraphs:
        kept = [ln for ln in para.splitlines() if ln.strip() and not set(ln.strip()) <= set("=-~*#")]
        line = " ".join(" ".join(kept).split())
        if not line or line.startswith("``"):
            continue
        return line if len(line) <= MAX_DOC else line[: MAX_DOC - 1] + "…"
    return ""


def _signature(obj: Any, name: str) -> str:
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        sig = ""
        text = getattr(obj, "__text_signature__", None)
        if isinstance(text, str):
            sig = text.replace("$module, ", "").replace("$self, ", "")
        else:  # ufuncs: "add(x1, x2, /, out=None, *, where=True, ...)" is the first docstring line
            doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
            if doc and doc[0].startswith(name + "("):
                sig = doc[0][len(name) :]
    sig = _ADDRESS_RE.sub("", sig)  # "<… object at 0x7f…>" defaults: a new address each run, a new file hash
    return sig if len(sig) <= MAX_SIG else sig[: MAX_SIG - 1] + "…"


def _kind(obj: Any) -> str:
    if inspect.ismodule(obj):
        return "namespace"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "constant" if isinstance(obj, (int, float, complex, bool, str)) else "variable"


def _members(obj: Any, names: list[str]) -> list[dict]:
    out = []
    for name in sorted(set(names)):
        if name.startswith("_"):
            continue
        try:
            value = getattr(obj, name)
        except Exception:  # noqa: BLE001 - deprecated attributes may raise on access
            continue
        kind = _kind(value)
        entry = {"name": name, "kind": kind}
        if kind in ("function", "class"):
            sig = _signature(value, name)
            if sig:
                entry["sig"] = sig
        if kind == "constant":
            doc = repr(value)[:MAX_DOC]
        elif kind == "variable":
            doc = type(value).__name__
        else:
            doc = _first_doc_line(value, name)
        if doc:
            entry["doc"] = doc
        out.append(entry)
    return out


def _public_names(module: Any) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    if module.__name__ == "numpy":  # submodules readers use that are not in numpy.__all__
        names = list(names) + [n for n in ("linalg", "random", "fft") if hasattr(module, n)]
    return list(names)


def generate(packages: list[Path]) -> dict:
    """{"modules": {"numpy": [{name, kind, sig?, doc?}, …], …}, "classes": {…}, "numpy": version}."""
    import warnings

    for folder in packages:
        if str(folder.parent) not in sys.path:
            sys.path.insert(0, str(folder.parent))
    modules: dict[str, list[dict]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in [*MODULES, *(folder.name for folder in packages)]:
            module = importlib.import_module(path)
            modules[path] = _members(module, _public_names(module))
        classes: dict[str, list[dict]] = {}
        for key, (mod, cls_name) in CLASSES.items():
            cls = getattr(importlib.import_module(mod), cls_name)
            classes[key] = _members(cls, [n for n in dir(cls) if not n.startswith("_")])
    return {"numpy": importlib.metadata.version("numpy"), "modules": modules, "classes": classes}


def _cache_key(packages: list[Path]) -> str:
    sources = sorted(p for folder in packages for p in folder.glob("*.py"))
    return digest(
        "numpy-completions",
        Path(__file__).read_bytes(),
        importlib.metadata.version("numpy"),
        *(part for p in sources for part in (str(p.relative_to(p.parent.parent)), p.read_bytes())),
    )


def _script(data: dict) -> bytes:
    return browser_data_script("editor", "completions", json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def completions_script(packages: list[Path], cache_dir: Path | None) -> bytes:
    """The bytes of assets/numpy-completions.js (from the cache when NumPy and the packages are unchanged)."""
    with open_cache(cache_dir) as store:
        return cached(store, _cache_key(packages), lambda: _script(generate(packages)))
