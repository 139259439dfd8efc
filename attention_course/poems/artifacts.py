"""Trained weights kept in the repository, and the check that they are still what the code would train.

Training the MLP and the Transformer of the Tang poems takes minutes on the course's 2-core machine (their
provenance files say how long), too long for every build and every fresh clone's tests. So each is trained by one
command, and what it writes is committed beside this file (`weights/<name>.bin`, a weights_format blob, and
`weights/<name>.json`: the layout and the provenance). The build never trains: it calls `check_provenance(name)`,
which recomputes what the weights depend on —

* the corpus: sha256 of the package's poems and of their simplified text (dataset.py), the converter and its
  version;
* the code: a digest of the training and forward code (`CODE[name]`), taken over each file's syntax tree with
  docstrings left out, so a comment, a docstring or reformatting does not make the weights stale, but any change
  to what runs does;
* the settings (the training module's `SETTINGS`) and the seed inside them;
* the bytes of the weights file itself —

and raises `StaleWeights` naming the command that refreshes them when any of these differ. NumPy's version and
the BLAS threads are recorded too (float rounding may differ across builds; the check does not require them).
"""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"

# The code that decides each model's weights, relative to the repository root: a whole file, or `file:name,…` for
# those top-level definitions of a shared module and every top-level definition they use, transitively (so adding
# an unrelated function to attention_core/core.py does not make the weights stale, changing softmax does).
CODE = {
    "tiny_gpt": [
        "attention_core/tiny_gpt.py",
        "attention_core/core.py:multi_head_trace,causal_mask,softmax",
        "attention_core/activations.py:GELU_TANH_COEFF,SQRT_2_OVER_PI",
        "attention_core/ngram.py:build_vocab,encode_all",
        "attention_course/poems/dataset.py",
        "attention_course/poems/weights_format.py",
        "attention_course/poems/train_transformer.py",
    ],
    "mlp": [
        "attention_core/ngram.py",
        "attention_course/poems/dataset.py",
        "attention_course/poems/weights_format.py",
        "attention_course/poems/train_mlp.py",
    ],
}
COMMAND = {
    "tiny_gpt": "python -m attention_course.poems.train_transformer",
    "mlp": "python -m attention_course.poems.train_mlp",
}


class StaleWeights(RuntimeError):
    """The committed weights were not trained by the code, corpus and settings of this checkout."""


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                if isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
    return tree


def _defined_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def _reachable(tree: ast.Module, names: list[str]) -> list[ast.stmt]:
    """The top-level statements defining `names` and every top-level name they use, in file order."""
    defs: dict[str, ast.stmt] = {}
    for node in tree.body:
        for n in _defined_names(node):
            defs[n] = node
    missing = [n for n in names if n not in defs]
    if missing:
        raise KeyError(f"not defined at the top level: {', '.join(missing)}")
    keep: set[int] = set()
    todo = list(names)
    while todo:
        node = defs[todo.pop()]
        if id(node) in keep:
            continue
        keep.add(id(node))
        todo += [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in defs]
    return [node for node in tree.body if id(node) in keep]


def code_digest_of(path: Path, names: list[str] | None = None) -> str:
    """sha256 of the file's syntax tree without docstrings (comments and layout never reach the tree); with
    `names`, of those definitions and what they use only."""
    tree = _strip_docstrings(ast.parse(path.read_text(encoding="utf-8")))
    assert isinstance(tree, ast.Module)
    if names:
        tree = ast.Module(body=_reachable(tree, names), type_ignores=[])
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode("utf-8")).hexdigest()


def code_digest(name: str, root: Path = ROOT) -> dict[str, str]:
    out = {}
    for entry in CODE[name]:
        rel, _, names = entry.partition(":")
        out[entry] = code_digest_of(root / rel, names.split(",") if names else None)
    return out


def paths(name: str, folder: Path = WEIGHTS_DIR) -> tuple[Path, Path]:
    return folder / f"{name}.bin", folder / f"{name}.json"


def write(name: str, blob: bytes, meta: dict[str, Any], folder: Path = WEIGHTS_DIR) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    bin_path, json_path = paths(name, folder)
    bin_path.write_bytes(blob)
    meta = {**meta, "weights_file": bin_path.name, "weights_sha256": hashlib.sha256(blob).hexdigest()}
    json_path.write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return bin_path, json_path


def read(name: str, folder: Path = WEIGHTS_DIR) -> tuple[bytes, dict[str, Any]]:
    bin_path, json_path = paths(name, folder)
    if not bin_path.is_file() or not json_path.is_file():
        raise StaleWeights(
            f"{bin_path}: the {name} weights are missing; fix: run `{COMMAND[name]}` (it trains them and writes "
            f"{bin_path.name} and {json_path.name}), then commit both"
        )
    return bin_path.read_bytes(), json.loads(json_path.read_text(encoding="utf-8"))


def expected_inputs(name: str, settings: dict[str, Any], root: Path = ROOT) -> dict[str, Any]:
    """What the weights must have been trained from, as the provenance records it."""
    from .corpus import POEMS_SHA256
    from .dataset import CONVERTER, CONVERTER_CONFIG, CONVERTER_VERSION, SIMPLIFIED_SHA256

    return {
        "corpus_sha256": POEMS_SHA256,
        "simplified_sha256": SIMPLIFIED_SHA256,
        "converter": {"package": CONVERTER, "version": CONVERTER_VERSION, "config": CONVERTER_CONFIG},
        "code": code_digest(name, root),
        "settings": json.loads(json.dumps(settings)),
    }


def check_provenance(
    name: str, settings: dict[str, Any] | None = None, *, folder: Path = WEIGHTS_DIR, root: Path = ROOT
) -> dict[str, Any]:
    """The provenance of the committed `name` weights, after checking it against this checkout (see the module's
    docstring); raises StaleWeights with the command that refreshes them."""
    if settings is None:
        settings = _settings_of(name)
    blob, meta = read(name, folder)
    fix = f"fix: run `{COMMAND[name]}` (minutes, see its provenance's training.wall_seconds) and commit weights/"
    if hashlib.sha256(blob).hexdigest() != meta.get("weights_sha256"):
        raise StaleWeights(f"{paths(name, folder)[0]}: the weights file is not the one its provenance names; {fix}")
    want = expected_inputs(name, settings, root)
    have = meta.get("inputs", {})
    problems = []
    for key in ("corpus_sha256", "simplified_sha256", "converter", "settings"):
        if have.get(key) != want[key]:
            problems.append(f"{key} changed")
    for rel, digest in want["code"].items():
        if have.get("code", {}).get(rel) != digest:
            problems.append(f"{rel} changed")
    extra = set(have.get("code", {})) - set(want["code"])
    if extra:
        problems.append(f"no longer part of the code: {', '.join(sorted(extra))}")
    if problems:
        raise StaleWeights(f"{paths(name, folder)[1]}: the {name} weights are stale ({'; '.join(problems)}); {fix}")
    return meta


def _settings_of(name: str) -> dict[str, Any]:
    if name == "tiny_gpt":
        from .train_transformer import SETTINGS
    elif name == "mlp":
        from .train_mlp import SETTINGS
    else:
        raise KeyError(name)
    return SETTINGS


__all__ = ["CODE", "COMMAND", "StaleWeights", "check_provenance", "code_digest", "expected_inputs", "read", "write"]
