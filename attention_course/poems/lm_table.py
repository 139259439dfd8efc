"""One table, three models of the same Tang poems: the bigram, the MLP and the tiny Transformer — same split,
same vocabulary, held-out perplexity per character on the same targets (every character of every held-out poem and
its closing ◆), parameters, and the first poem each writes at T = 1 with the same seed.

`results(options)` composes ngram_lm.results (bigram, MLP) and transformer_lm.results (each cached machine-wide by
its own digest) into `{"models": [...], "facts": {...}}`: `models` for a table widget, `facts` (formatted strings)
for ``{data}`…` `` quotes.
"""

from __future__ import annotations

import math
from typing import Any

from builder.model import BuildOptions

from . import ngram_lm, transformer_lm
from .dataset import CONVERTER, CONVERTER_CONFIG, CONVERTER_VERSION, SOURCE


def table(ngram: dict[str, Any], tf: dict[str, Any]) -> dict[str, Any]:
    """The table from the two results (pure: a test recomputes it)."""
    f = ngram["facts"]
    rows = [
        {
            "key": "bigram",
            "name": "二元模型",
            "context": 1,
            "params": ngram["bigram_params"],
            "held_nll": ngram["bigram_held_nll"],
            "sample": ngram["bigram_samples"][0],
        },
        {
            "key": "mlp",
            "name": "MLP",
            "context": int(f["mlp_context"]),
            "params": ngram["mlp_params"],
            "held_nll": ngram["mlp_held_nll"],
            "sample": ngram["mlp_samples"][0],
        },
        {
            "key": "transformer",
            "name": "Transformer",
            "context": tf["config"]["context"],
            "params": tf["n_params"],
            "held_nll": tf["held_out"]["nll"],
            "sample": tf["samples"][0],
        },
    ]
    facts: dict[str, str] = {}
    for row in rows:
        row["held_ppl"] = math.exp(row["held_nll"])
        k = row["key"]
        facts[f"{k}_params"] = f"{row['params']:,}"
        facts[f"{k}_held_nll"] = f"{row['held_nll']:.2f}"
        facts[f"{k}_held_ppl"] = f"{row['held_ppl']:.0f}"
        facts[f"{k}_sample"] = row["sample"]
    cfg = tf["config"]
    facts.update(
        {
            "transformer_layers": str(cfg["n_layers"]),
            "transformer_heads": str(cfg["n_heads"]),
            "transformer_d_model": str(cfg["d_model"]),
            "transformer_context": str(cfg["context"]),
            "transformer_weights_kb": f"{tf['weights_bytes'] / 1024:.0f}",
            "transformer_train_minutes": f"{tf['training']['wall_seconds'] / 60:.0f}",
            "transformer_epochs": f"{tf['training']['epochs']:.1f}",
            "sample_temperature": "1",
            "held_targets": f"{tf['held_out']['targets']:,}",
        }
    )
    facts["converter"] = f"{CONVERTER} {CONVERTER_VERSION}"
    facts["source_package"] = SOURCE["package"]
    return {
        "models": rows,
        "facts": facts,
        "temperature": 1.0,
        "seed": transformer_lm.SAMPLE_SEED,
        # what the credit names: the package and its script as published, and how the text was converted
        "source": {**SOURCE, "converter": f"{CONVERTER} {CONVERTER_VERSION} ({CONVERTER_CONFIG})"},
    }


def results(options: BuildOptions) -> dict[str, Any]:
    """The three-model table of the real corpus; raises CorpusError, StaleWeights."""
    return table(ngram_lm.results(options), transformer_lm.results(options))


__all__ = ["results", "table"]
