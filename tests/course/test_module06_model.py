"""Module 06's real-model facts: the parameter count of SmolLM2-135M from the GGUF the course runs (tensor shapes
in its metadata), the logit lens, and the claims the page's prose makes about "The capital of France is"."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.models.gguf_reader import open_gguf
from attention_core.models.llama import logit_lens
from attention_core.param_count import PRESETS, count_parameters


def test_the_preset_is_the_real_files_configuration_and_parameter_count(smollm2_path, smollm2):
    cfg = smollm2.config  # read from the GGUF metadata (llama.* keys)
    preset = PRESETS["smollm2-135m"]
    assert (cfg.n_layers, cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.d_ffn, cfg.vocab_size, cfg.tied_embeddings) == (
        preset.n_layers,
        preset.d_model,
        preset.n_heads,
        preset.n_kv_heads,
        preset.d_ffn,
        preset.vocab_size,
        True,
    )
    reader = open_gguf(smollm2_path)
    in_file = sum(int(np.prod(t.shape)) for t in reader.tensors)  # every weight the file stores, counted
    assert in_file == count_parameters(preset)["total"] == 134_515_008


@pytest.fixture(scope="module")
def paris(smollm2):
    result = smollm2.run("The capital of France is", return_residuals=True)
    return result, logit_lens(smollm2.weights, result.residuals)


def test_the_lens_at_the_last_depth_is_the_models_output(paris, smollm2):
    result, lens = paris
    assert lens.shape == (smollm2.config.n_layers + 1, smollm2.config.vocab_size)
    assert np.array_equal(lens[-1], result.logits[-1])


def test_the_prose_about_paris_holds(paris, smollm2):
    """The page says: ␣Paris is thousands of places down in most layers, climbs only in the last few, and is first
    only at the output; the middle layers' best tokens are mostly spaces and full stops."""
    result, lens = paris
    paris_id = smollm2.tokenizer.encode(" Paris")
    assert len(paris_id) == 1 and int(np.argmax(result.logits[-1])) == paris_id[0]
    ranks = [(row > row[paris_id[0]]).sum() + 1 for row in lens]
    n = len(ranks) - 1
    assert sum(r > 1000 for r in ranks) > n * 2 / 3  # 几千名开外 in most layers
    assert all(r > 1 for r in ranks[:-1]) and ranks[-1] == 1  # first only at the output
    assert ranks[n - 3] < 100  # the climb happens in the last few layers
    middle = [smollm2.tokenizer.token_string(int(np.argmax(row))) for row in lens[5:25]]
    assert sum(t in (" ", ".", ",") for t in middle) > len(middle) / 2
