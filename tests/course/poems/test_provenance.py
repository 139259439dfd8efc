"""artifacts.check_provenance: committed weights are checked against the code, corpus and settings of the checkout;
anything stale is an error naming the command that refreshes them."""

from __future__ import annotations

import json
import shutil

import pytest

from attention_course.poems import artifacts
from tests.conftest import ROOT

SETTINGS = {"steps": 3, "seed": 0}


@pytest.fixture
def checkout(tmp_path):
    """A copy of the files the Transformer's code digest reads, and weights written for them."""
    root = tmp_path / "repo"
    for entry in artifacts.CODE["tiny_gpt"]:
        rel = entry.split(":")[0]
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    folder = tmp_path / "weights"
    meta = {"inputs": artifacts.expected_inputs("tiny_gpt", SETTINGS, root)}
    artifacts.write("tiny_gpt", b"\x01\x02\x03", meta, folder)
    return root, folder


def check(checkout, settings=SETTINGS):
    root, folder = checkout
    return artifacts.check_provenance("tiny_gpt", settings, folder=folder, root=root)


def test_fresh_weights_pass_and_docstrings_or_comments_do_not_matter(checkout):
    root, _ = checkout
    assert check(checkout)["weights_sha256"]
    path = root / "attention_core" / "tiny_gpt.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"""A tiny decoder-only', '"""A very small decoder-only', 1) + "\n# a comment\n")
    check(checkout)
    # an unrelated addition to a shared module is not part of what trained the weights
    core = root / "attention_core" / "core.py"
    core.write_text(core.read_text(encoding="utf-8") + "\n\ndef unrelated():\n    return 1\n", encoding="utf-8")
    check(checkout)


def test_a_code_change_is_stale_and_names_the_command(checkout):
    root, _ = checkout
    path = root / "attention_core" / "tiny_gpt.py"
    path.write_text(path.read_text(encoding="utf-8").replace("eps: float = 1e-5", "eps: float = 1e-6"))
    with pytest.raises(artifacts.StaleWeights) as info:
        check(checkout)
    message = str(info.value)
    assert "attention_core/tiny_gpt.py changed" in message
    assert "python -m attention_course.poems.train_transformer" in message


def test_a_change_in_a_function_the_forward_uses_is_stale(checkout):
    root, _ = checkout
    core = root / "attention_core" / "core.py"
    text = core.read_text(encoding="utf-8")
    assert "e = np.exp(shifted / t)" in text
    core.write_text(text.replace("e = np.exp(shifted / t)", "e = np.exp(shifted / t / 1.0)"), encoding="utf-8")
    with pytest.raises(artifacts.StaleWeights, match=r"attention_core/core\.py:multi_head_trace.* changed"):
        check(checkout)


def test_other_settings_a_changed_file_or_missing_weights_are_errors(checkout, tmp_path):
    with pytest.raises(artifacts.StaleWeights, match="settings changed"):
        check(checkout, {"steps": 4, "seed": 0})
    root, folder = checkout
    (folder / "tiny_gpt.bin").write_bytes(b"\x01\x02\x04")
    with pytest.raises(artifacts.StaleWeights, match="not the one its provenance names"):
        check(checkout)
    with pytest.raises(artifacts.StaleWeights, match="missing.*train_transformer"):
        artifacts.check_provenance("tiny_gpt", SETTINGS, folder=tmp_path / "nowhere", root=root)


def test_the_committed_weights_are_fresh():
    """The repository's own weights were trained by this checkout's code (else: the command in the message)."""
    for name in ("mlp", "tiny_gpt"):
        meta = artifacts.check_provenance(name)
        assert meta["inputs"]["converter"]["version"] == "1.4.2"
        json.dumps(meta)  # plain data
