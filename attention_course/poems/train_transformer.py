"""Train the tiny Transformer (attention_core/tiny_gpt.py) on the Tang poems — one command, deterministic:

    OPENBLAS_NUM_THREADS=1 python -m attention_course.poems.train_transformer

Same poems, split and vocabulary as the bigram and the MLP (dataset.py). The training text is every training
poem in order, each followed by the boundary ◆, as one stream; a batch is `batch` windows of `context` + 1 ids,
half of them starting at a poem's ◆ (as a reader's poem starts), the rest anywhere. AdamW with warm-up and a cosine
schedule, gradients clipped, everything seeded: the same NumPy build gives the same weights bit for bit.

It writes weights/tiny_gpt.bin and weights/tiny_gpt.json (artifacts.py): the weights as int8 with one scale per
row (the vectors as float32), the layout, the vocabulary, the loss curve, the held-out perplexity before and after
quantising, and the provenance the build checks. Takes about half an hour on one core of the course's machine.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads: small matrices, threads cost more

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from attention_core import ngram, tiny_gpt  # noqa: E402

from . import artifacts, weights_format  # noqa: E402
from .dataset import Split, vocabulary  # noqa: E402

NAME = "tiny_gpt"
SETTINGS: dict[str, Any] = {
    "config": {"context": 64, "d_model": 128, "n_layers": 4, "n_heads": 4, "d_ff": 512},
    "steps": 3000,
    "batch": 32,
    "lr": 3e-3,
    "warmup": 150,
    "lr_floor": 0.1,
    "weight_decay": 0.1,
    "betas": [0.9, 0.99],
    "clip": 1.0,
    "poem_start_share": 0.5,
    "eval_every": 100,
    "eval_windows": 64,
    "seed": 0,
    "alpha": 0.1,  # add-α smoothing of the unigram that starts the output bias
    "matrices": "int8-rows",  # how the shipped weights store matrices (weights_format.py)
}


def stream_of(poems_ids: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """One id stream ◆ poem ◆ poem ◆ … (each poem's ids from ngram.encode_all share their ◆ with the next) and
    the positions of its ◆ that start a poem."""
    parts = [np.zeros(1, dtype=np.int64)] + [ids[1:] for ids in poems_ids]
    stream = np.concatenate(parts)
    starts = np.flatnonzero(stream[:-1] == 0)
    return stream, starts


def sample_windows(
    rng: np.random.Generator, stream: np.ndarray, starts: np.ndarray, n: int, length: int, poem_start_share: float
) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of n windows: y is x shifted by one."""
    at_poem = rng.random(n) < poem_start_share
    last = len(stream) - length - 1
    first = np.where(
        at_poem, starts[rng.integers(0, len(starts), n)].clip(max=last), rng.integers(0, last + 1, n)
    ).astype(np.int64)
    idx = first[:, None] + np.arange(length + 1)
    w = stream[idx]
    return w[:, :-1], w[:, 1:]


def config_for(vocab_size: int, settings: dict[str, Any] = SETTINGS) -> tiny_gpt.Config:
    return tiny_gpt.Config(vocab_size=vocab_size, **settings["config"])


def train(
    train_ids: list[np.ndarray],
    held_ids: list[np.ndarray],
    vocab_size: int,
    settings: dict[str, Any] = SETTINGS,
    *,
    log=None,
) -> tuple[tiny_gpt.Params, dict[str, Any]]:
    """Train from scratch; returns the float32 parameters and the run's record (curve, seconds, tokens)."""
    s = settings
    cfg = config_for(vocab_size, s)
    T = cfg.context
    stream, starts = stream_of(train_ids)
    held_stream, held_starts = stream_of(held_ids)
    counts = np.bincount(stream[1:], minlength=vocab_size).astype(np.float64) + s["alpha"]
    params = tiny_gpt.init_params(cfg, seed=s["seed"], out_bias=np.log(counts / counts.sum()))
    rng = np.random.default_rng(s["seed"])
    eval_rng = np.random.default_rng(s["seed"] + 1)
    ev_train = sample_windows(eval_rng, stream, starts, s["eval_windows"], T, s["poem_start_share"])
    ev_held = sample_windows(eval_rng, held_stream, held_starts, s["eval_windows"], T, s["poem_start_share"])
    opt = tiny_gpt.AdamW(lr=s["lr"], betas=tuple(s["betas"]), weight_decay=s["weight_decay"])
    curve: dict[str, list] = {"steps": [], "train": [], "held": [], "batch": []}
    recent: list[float] = []

    def measure(step: int) -> None:
        curve["steps"].append(step)
        curve["train"].append(round(tiny_gpt.loss(params, cfg, *ev_train), 5))
        curve["held"].append(round(tiny_gpt.loss(params, cfg, *ev_held), 5))
        curve["batch"].append(round(float(np.mean(recent)), 5) if recent else None)
        recent.clear()
        if log:
            log(f"step {step:5d}  train {curve['train'][-1]:.3f}  held-out {curve['held'][-1]:.3f}")

    wall, cpu = time.perf_counter(), time.process_time()
    load_start = os.getloadavg()
    measure(0)
    for step in range(1, s["steps"] + 1):
        x, y = sample_windows(rng, stream, starts, s["batch"], T, s["poem_start_share"])
        loss, grads = tiny_gpt.loss_and_grads(params, cfg, x, y)
        recent.append(loss)
        tiny_gpt.clip_gradients(grads, s["clip"])
        lr = tiny_gpt.lr_at(step, peak=s["lr"], warmup=s["warmup"], total=s["steps"], floor=s["lr_floor"])
        opt.update(params, grads, lr)
        if step % s["eval_every"] == 0 or step == s["steps"]:
            measure(step)
    record = {
        "curve": curve,
        "wall_seconds": round(time.perf_counter() - wall, 1),
        "cpu_seconds": round(time.process_time() - cpu, 1),
        "loadavg_start": [round(v, 2) for v in load_start],
        "loadavg_end": [round(v, 2) for v in os.getloadavg()],
        "tokens_seen": s["steps"] * s["batch"] * T,
        "train_stream_tokens": int(len(stream)),
        "epochs": round(s["steps"] * s["batch"] * T / len(stream), 3),
    }
    return params, record


def environment() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, help="override the step count (a quick trial; not committable)")
    parser.add_argument("--out", help="write somewhere else than attention_course/poems/weights/")
    args = parser.parse_args(argv)
    from builder.model import BuildOptions

    from .dataset import load_split
    from .transformer_lm import held_out_nll

    settings = dict(SETTINGS)
    if args.steps:
        settings["steps"] = args.steps
    inputs = artifacts.expected_inputs(NAME, settings)  # before training: the code that runs is the code digested
    split: Split = load_split(BuildOptions(root=artifacts.ROOT, cache_dir=None))
    vocab = vocabulary(split)
    train_ids, held_ids = ngram.encode_all(split.train, vocab), ngram.encode_all(split.held, vocab)
    print(f"{len(split.train):,} training poems, {len(split.held):,} held out, vocabulary {len(vocab):,}", flush=True)
    params, record = train(train_ids, held_ids, len(vocab), settings, log=lambda m: print(m, flush=True))
    cfg = config_for(len(vocab), settings)
    order = tiny_gpt.param_names(cfg)
    metrics: dict[str, Any] = {"float32": held_out_nll(params, cfg, held_ids)}
    blobs = {}
    for enc in ("float16", "int8-rows"):
        blob, layout = weights_format.pack(params, order, matrices=enc)
        blobs[enc] = (blob, layout)
        metrics[enc] = {**held_out_nll(weights_format.unpack(blob, layout), cfg, held_ids), "bytes": len(blob)}
        print(f"{enc}: {metrics[enc]}", flush=True)
    metrics["float32"]["bytes"] = 4 * tiny_gpt.n_params(cfg)
    print(f"float32: {metrics['float32']}", flush=True)
    blob, layout = blobs[settings["matrices"]]
    meta = {
        "model": "tiny decoder-only Transformer (attention_core/tiny_gpt.py)",
        "command": artifacts.COMMAND[NAME],
        "format": weights_format.FORMAT,
        "config": cfg.to_dict(),
        "n_params": tiny_gpt.n_params(cfg),
        "layout": layout,
        "vocab": "".join(vocab),
        "source": {"converter": split.converter},
        "inputs": inputs,
        "environment": environment(),
        "training": record,
        "held_out": metrics,
    }
    if args.steps and not args.out:
        print("--steps without --out: not writing over the committed weights", file=sys.stderr)
        return 0
    from pathlib import Path

    out = artifacts.write(NAME, blob, meta, Path(args.out) if args.out else artifacts.WEIGHTS_DIR)
    print(f"wrote {out[0]} ({len(blob):,} bytes) and {out[1]}; training took {record['wall_seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
