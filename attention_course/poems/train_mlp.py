"""Train module 04's MLP language model (attention_core.ngram.MLP, Bengio et al. 2003) on the Tang poems — one
command, deterministic:

    OPENBLAS_NUM_THREADS=1 python -m attention_course.poems.train_mlp

Same poems, split and vocabulary as the bigram and the Transformer (dataset.py). The model sees the previous
`context` = 8 characters: enough for a seven-character line and its mark, so it can tell where in a line it is,
which the bigram cannot. Adam on random minibatches with a cosine learning-rate schedule (ngram.MLP's own
hand-written backward pass), the output bias started at the log unigram frequencies, everything seeded. Every
`eval_every` steps the loss on the same fixed positions of the training and the held-out poems makes the curve.

Writes weights/mlp.bin and weights/mlp.json (artifacts.py), like train_transformer.py. A few minutes on one core.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from attention_core import ngram  # noqa: E402

from . import artifacts, weights_format  # noqa: E402
from .dataset import vocabulary  # noqa: E402

NAME = "mlp"
SETTINGS: dict[str, Any] = {
    "context": 8,
    "dim": 32,
    "hidden": 256,
    "steps": 12000,
    "batch": 256,
    "lr": 0.005,
    "lr_floor": 0.1,
    "eval_every": 200,
    "eval_size": 8192,
    "alpha": 0.1,
    "seed": 0,
    "matrices": "int8-rows",
}
ORDER = ["C", "W1", "b1", "W2", "b2"]


def lr_at(step: int, s: dict[str, Any]) -> float:
    """Cosine from `lr` down to `lr_floor`·lr over the run."""
    t = step / s["steps"]
    return s["lr"] * (s["lr_floor"] + (1 - s["lr_floor"]) * 0.5 * (1 + math.cos(math.pi * t)))


def train(
    train_ids: list[np.ndarray], held_ids: list[np.ndarray], vocab_size: int, s: dict[str, Any] = SETTINGS, *, log=None
) -> tuple[ngram.MLP, dict[str, Any]]:
    x, y = ngram.contexts(train_ids, s["context"])
    xh, yh = ngram.contexts(held_ids, s["context"])
    counts = ngram.bigram_counts(train_ids, vocab_size)
    model = ngram.MLP.init(
        vocab_size,
        context=s["context"],
        dim=s["dim"],
        hidden=s["hidden"],
        seed=s["seed"],
        dtype=np.float32,
        output_bias=np.log(ngram.unigram_probs(counts, s["alpha"])),
    )
    rng = np.random.default_rng(s["seed"])
    ev_train = rng.choice(len(x), size=s["eval_size"], replace=False)
    ev_held = rng.choice(len(xh), size=s["eval_size"], replace=False)
    params = model.params()
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    b1, b2, eps = 0.9, 0.999, 1e-8
    curve: dict[str, list] = {"steps": [], "train": [], "held": []}

    def measure(step: int) -> None:
        curve["steps"].append(step)
        curve["train"].append(round(model.loss(x[ev_train], y[ev_train]), 5))
        curve["held"].append(round(model.loss(xh[ev_held], yh[ev_held]), 5))
        if log:
            log(f"step {step:6d}  train {curve['train'][-1]:.3f}  held-out {curve['held'][-1]:.3f}")

    wall, cpu, load_start = time.perf_counter(), time.process_time(), os.getloadavg()
    measure(0)
    for step in range(1, s["steps"] + 1):
        idx = rng.integers(0, len(x), size=s["batch"])
        _, grads = model.loss_and_grads(x[idx], y[idx])
        lr = lr_at(step, s)
        for p, g, mi, vi in zip(params, grads, m, v):
            mi *= b1
            mi += (1 - b1) * g
            vi *= b2
            vi += (1 - b2) * g * g
            p -= lr * (mi / (1 - b1**step)) / (np.sqrt(vi / (1 - b2**step)) + eps)
        if step % s["eval_every"] == 0 or step == s["steps"]:
            measure(step)
    record = {
        "curve": curve,
        "wall_seconds": round(time.perf_counter() - wall, 1),
        "cpu_seconds": round(time.process_time() - cpu, 1),
        "loadavg_start": [round(a, 2) for a in load_start],
        "loadavg_end": [round(a, 2) for a in os.getloadavg()],
        "positions": int(len(x)),
        "epochs": round(s["steps"] * s["batch"] / len(x), 3),
    }
    return model, record


def held_out_nll(params: dict[str, np.ndarray], context: int, held_ids: list[np.ndarray]) -> dict[str, float]:
    """Mean nats per predicted character over every held-out target (the same targets as the bigram's)."""
    model = ngram.MLP(**{k: params[k] for k in ORDER})
    xh, yh = ngram.contexts(held_ids, context)
    total = 0.0
    for k in range(0, len(xh), 8192):
        logp = ngram.log_softmax(model.logits(xh[k : k + 8192]).astype(np.float64))
        total += float(-logp[np.arange(len(yh[k : k + 8192])), yh[k : k + 8192]].sum())
    mean = total / len(yh)
    return {"nll": round(mean, 6), "ppl": round(float(np.exp(mean)), 4), "targets": int(len(yh))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, help="override the step count (a quick trial; needs --out)")
    parser.add_argument("--out", help="write somewhere else than attention_course/poems/weights/")
    args = parser.parse_args(argv)
    from builder.model import BuildOptions

    from .dataset import load_split

    settings = dict(SETTINGS)
    if args.steps:
        if not args.out:
            parser.error("--steps needs --out: a trial never replaces the committed weights")
        settings["steps"] = args.steps
    inputs = artifacts.expected_inputs(NAME, settings)
    split = load_split(BuildOptions(root=artifacts.ROOT, cache_dir=None))
    vocab = vocabulary(split)
    train_ids, held_ids = ngram.encode_all(split.train, vocab), ngram.encode_all(split.held, vocab)
    model, record = train(train_ids, held_ids, len(vocab), settings, log=lambda msg: print(msg, flush=True))
    params = dict(zip(ORDER, model.params()))
    metrics: dict[str, Any] = {"float32": {**held_out_nll(params, settings["context"], held_ids)}}
    metrics["float32"]["bytes"] = 4 * sum(p.size for p in params.values())
    blobs = {}
    for enc in ("float16", "int8-rows"):
        blob, layout = weights_format.pack(params, ORDER, matrices=enc)
        blobs[enc] = (blob, layout)
        shipped = weights_format.unpack(blob, layout)
        metrics[enc] = {**held_out_nll(shipped, settings["context"], held_ids), "bytes": len(blob)}
    for enc, m in metrics.items():
        print(f"{enc}: {m}", flush=True)
    blob, layout = blobs[settings["matrices"]]
    meta = {
        "model": "MLP language model (attention_core/ngram.py MLP)",
        "command": artifacts.COMMAND[NAME],
        "format": weights_format.FORMAT,
        "n_params": int(sum(p.size for p in params.values())),
        "layout": layout,
        "vocab": "".join(vocab),
        "source": {"converter": split.converter},
        "inputs": inputs,
        "environment": {
            "numpy": np.__version__,
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "cores": os.cpu_count(),
        },
        "training": record,
        "held_out": metrics,
    }
    out = artifacts.write(NAME, blob, meta, Path(args.out) if args.out else artifacts.WEIGHTS_DIR)
    print(f"wrote {out[0]} ({len(blob):,} bytes) and {out[1]}; training took {record['wall_seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
