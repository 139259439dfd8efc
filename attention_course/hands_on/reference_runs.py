"""The hands-on module's two training runs, done once by the build with the reference pieces (attention_core.mini_gpt)
and exactly the settings of the page's cells: their curves are the `training-curve` widgets the page shows before the
reader trains, and their numbers are what its prose quotes. A test runs the page's own cells natively and finds the
same curve (tests/course/test_hands_on.py), so the page and these settings cannot drift apart.

- `induction`: the repeated-sequence task (training.RepeatTask). The threshold: the loss on the positions that can be
  copied below `COPY_LOSS`, and a head of the last layer giving at least `INDUCTION_SCORE` of its weight to the
  positions right after an earlier occurrence of the current token (training.induction_scores).
- `poems`: module 04's vocabulary, the browser slice of the training poems (poems/browser_data.py), `POEM_STEPS`
  steps (about two minutes in a desktop browser), then `POEM_LONG_STEPS` to see where a longer run gets; the
  held-out perplexity on the slice's held-out poems, beside the course's three models on the same poems.

Both are deterministic (seeded, float32, one BLAS thread in the build): the same numbers on every build.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from attention_core import autograd, mini_gpt, training
from builder import cache as cachestore
from builder import progress
from builder.numerics import one_blas_thread

INDUCTION = {
    "task": {"vocab": 12, "length": 20, "min_period": 3, "max_period": 7, "seed": 0},
    "model": {"d_model": 32, "n_layers": 2, "n_heads": 2, "d_ff": 64},
    "seed": 0,
    "lr": 3e-3,
    "batch": 32,
    "steps": 300,
}
COPY_LOSS = 0.3  # nats: the copyable positions are predicted with p ≥ e^−0.3 ≈ 0.74 on average
INDUCTION_SCORE = 0.5  # half of a head's weight on "what followed the last occurrence"
POEMS = {
    "model": {"context": 64, "d_model": 32, "n_layers": 2, "n_heads": 4, "d_ff": 128},
    "seed": 0,
    "lr": 3e-3,
    "batch": 8,
    "steps": 400,
    "long_steps": 1600,
}
POEM_STEPS = POEMS["steps"]
POEM_LONG_STEPS = POEMS["long_steps"]
RUNS = ("induction", "poems")


# --------------------------------------------------------------------------- the induction run


def train_induction(settings: dict[str, Any] = INDUCTION) -> dict[str, Any]:
    """The page's induction cell, with the reference pieces: the curve, the step the threshold was crossed, the
    scores of every head at the end and a probe sequence's attention."""
    task = training.RepeatTask(**settings["task"])
    cfg = mini_gpt.Config(vocab_size=task.vocab, context=task.length, **settings["model"])
    params = mini_gpt.init_params(cfg, seed=settings["seed"])
    opt = training.AdamW(params, lr=settings["lr"])
    curve = training.LiveCurve("", ["全部位置", "可以照抄的位置", "归纳得分"])
    crossed = None
    started = time.process_time()
    for step in range(settings["steps"]):
        x, y, copyable = task.batch(settings["batch"])
        logits, maps = mini_gpt.gpt(params, x, cfg.n_heads)
        loss = mini_gpt.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        copy_loss = training.token_losses(logits, y)[copyable].mean()
        score = training.induction_scores(maps[-1], x).max()
        curve.add(step, loss.item(), copy_loss, score)
        if crossed is None and copy_loss < COPY_LOSS and score >= INDUCTION_SCORE:
            crossed = step
    seconds = time.process_time() - started
    probe_x, _, _ = training.RepeatTask(**{**settings["task"], "seed": 99}).batch(64)
    _, maps = mini_gpt.gpt(params, probe_x, cfg.n_heads)
    induction = [training.induction_scores(m, probe_x).tolist() for m in maps]
    previous = [training.previous_token_scores(m).tolist() for m in maps]
    return {
        "points": [s for s in curve.points],
        "crossed": crossed,
        "induction": induction,
        "previous": previous,
        "params": mini_gpt.count_params(params),
        "cpu_seconds": round(seconds, 2),
    }


# --------------------------------------------------------------------------- the poem run


def _poems(files: dict[str, bytes]):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))
    try:
        import tang_poems
    finally:
        sys.path.pop(0)
    vocab = files["vocab.txt"].decode("utf-8").rstrip("\n").split("\n")
    train = np.frombuffer(files["train.u16"], dtype="<u2").astype(np.intp)
    held = np.frombuffer(files["held.u16"], dtype="<u2").astype(np.intp)
    return tang_poems.Poems(vocab, train, held, json.loads(files["facts.json"]))


def train_poems(files: dict[str, bytes], settings: dict[str, Any] = POEMS) -> dict[str, Any]:
    """The page's poem cells, with the reference pieces: the curve of the first `steps`, the held-out perplexity
    there and after `long_steps`, and a sample poem."""
    poems = _poems(files)
    V = len(poems.vocab)
    cfg = mini_gpt.Config(vocab_size=V, **settings["model"])
    counts = np.bincount(poems.train, minlength=V) + 1.0
    params = mini_gpt.init_params(cfg, seed=settings["seed"], out_bias=np.log(counts / counts.sum()))
    opt = training.AdamW(params, lr=settings["lr"])
    rng = np.random.default_rng(settings["seed"])
    curve = training.LiveCurve("", ["训练损失"])

    def logits_of(x: np.ndarray) -> np.ndarray:
        return mini_gpt.gpt(params, x, cfg.n_heads)[0].data

    def held_ppl() -> float:
        return float(np.exp(training.mean_nll(logits_of, poems.held, cfg.context)))

    out: dict[str, Any] = {"params": mini_gpt.count_params(params)}
    started = time.process_time()
    for step in range(settings["long_steps"]):
        x, y = poems.batch(settings["batch"], cfg.context, rng)
        logits, _ = mini_gpt.gpt(params, x, cfg.n_heads)
        loss = autograd.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step < settings["steps"]:
            curve.add(step, loss.item())
        if step + 1 == settings["steps"]:
            out["cpu_seconds"] = round(time.process_time() - started, 2)
            out["ppl"] = held_ppl()
            sample_rng = np.random.default_rng(1)
            ids = training.sample(
                lambda w: logits_of(w)[0, -1], [0], steps=48, context=cfg.context, rng=sample_rng, stop=0
            )
            out["sample"] = poems.decode(ids)
    out["long_ppl"] = held_ppl()
    out["points"] = curve.points
    out["positions"] = settings["steps"] * settings["batch"] * cfg.context
    out["long_positions"] = settings["long_steps"] * settings["batch"] * cfg.context
    out["models"] = poems.facts["models"]
    out["facts"] = {k: v for k, v in poems.facts.items() if k != "models"}
    out["embedding_params"] = int(params["tok"].data.size + params["out"].data.size + params["out_bias"].data.size)
    return out


# --------------------------------------------------------------------------- what the page reads


def _code_digest() -> str:
    import attention_core

    here = Path(attention_core.__file__).parent
    files = [Path(__file__), here / "autograd.py", here / "mini_gpt.py", here / "training.py"]
    return cachestore.digest(*(cachestore.file_digest(f) for f in files))


def results(name: str, build: Any = None) -> dict[str, Any]:
    """A run's results, computed once per machine (corpus.py `POEM_MODELS`, keyed by the code and its inputs)."""
    from ..poems.corpus import POEM_MODELS

    if name == "induction":
        key = cachestore.digest("hands-on-induction", _code_digest(), json.dumps(INDUCTION, sort_keys=True))
        return POEM_MODELS.cached(key, _computed_induction, lock="hands-on")
    if name == "poems":
        from builder.model import BuildOptions

        from ..poems.browser_data import package_files

        options = build if build is not None else BuildOptions(root=Path(__file__).resolve().parents[2])
        files = package_files(options)
        full = _whole_held_out_nll(options)
        data = cachestore.digest(*(f"{k}:{hashlib.sha256(v).hexdigest()}" for k, v in sorted(files.items())))
        key = cachestore.digest("hands-on-poems", _code_digest(), data, json.dumps(POEMS, sort_keys=True))
        run = POEM_MODELS.cached(key, lambda: _computed_poems(files), lock="hands-on-poems")
        # how far the slice's perplexities lie from the whole held-out set's (module 04's and module 07's table)
        gaps = [abs(run["models"][k]["nll"] - full[k]) for k in full]  # a difference of log-perplexities
        return {**run, "slice_gap": float(np.expm1(max(gaps)))}
    raise KeyError(f"unknown run {name!r} (known: {', '.join(RUNS)})")


def _whole_held_out_nll(options: Any) -> dict[str, float]:
    """The three models' mean NLL on the whole held-out set, as module 04 and module 07 report them."""
    from ..poems import ngram_lm, transformer_lm

    lm = ngram_lm.results(options)
    return {
        "bigram": float(lm["bigram_held_nll"]),
        "mlp": float(lm["mlp_held_nll"]),
        "transformer": float(transformer_lm.results(options)["held_out"]["nll"]),
    }


def _computed_induction() -> dict[str, Any]:
    # one BLAS thread wherever it is computed (the build, a test): the same floats on every machine
    with progress.step("the hands-on module: training the repeated-sequence model"), one_blas_thread():
        return train_induction()


def _computed_poems(files: dict[str, bytes]) -> dict[str, Any]:
    with progress.step("the hands-on module: training the small poem model (about a minute)"), one_blas_thread():
        return train_poems(files)


def seen_letter_loss(task: dict[str, Any] = INDUCTION["task"]) -> float:
    """The loss on the copyable positions of a model that knows only "the next letter is one of the segment's other
    letters" and guesses evenly among them: ln(period − 1), averaged over the copyable positions of every period."""
    periods = range(task["min_period"], task["max_period"] + 1)
    counts = [task["length"] - p for p in periods]  # copyable positions of a sequence with this period
    return float(sum(n * np.log(p - 1) for n, p in zip(counts, periods)) / sum(counts))


def _smoothed(points: list[list[float]], width: int = 11) -> np.ndarray:
    values = np.array([p[1] for p in points], dtype=float)
    padded = np.pad(values, width // 2, mode="edge")
    return np.convolve(padded, np.ones(width) / width, mode="valid")


TIMINGS = Path(__file__).with_name("browser_timings.json")  # bench/training_bench.py --page-numbers writes it


def _timings() -> dict[str, Any]:
    """How long the page's trainings took in the browsers (medians of bench/training_bench.py, committed with when,
    the machine and its load): desktop Chromium, Firefox and WebKit over http and file://, and a phone profile."""
    return json.loads(TIMINGS.read_text("utf-8"))


def _span(values: list[float], digits: int = 0) -> str:
    """'8–12' (or one number when they round alike)."""
    low, high = (f"{v:.{digits}f}" for v in (min(values), max(values)))
    return low if low == high else f"{low}–{high}"


def _timing_quotes() -> dict[str, str]:
    t = _timings()
    desktop = list(t["desktop"]["medians"].values())
    phone = list(t["phone"]["medians"].values())
    steps, long_steps = POEMS["steps"], POEMS["long_steps"]
    return {
        "desktop_threshold_s": _span([m["induction_threshold_s"] for m in desktop]),
        "desktop_done_s": _span([m["induction_done_s"] for m in desktop]),
        "desktop_poem_s": _span([steps / m["poem_steps_per_s"] for m in desktop]),
        "desktop_long_minutes": _span([long_steps / m["poem_steps_per_s"] / 60 for m in desktop], 1),
        "desktop_first_point_s": _span([m["poem_first_point_s"] for m in desktop], 1),
        "phone_threshold_s": _span([m["induction_threshold_s"] for m in phone]),
        "phone_done_s": _span([m["induction_done_s"] for m in phone]),
        "phone_poem_minutes": _span([steps / m["poem_steps_per_s"] / 60 for m in phone], 1),
        "phone_first_point_s": _span([m["poem_first_point_s"] for m in phone], 1),
        "measured": f"{t['desktop']['measured'][:10]}，{t['desktop']['cores']} 核的机器",
    }


SHOWN_POINTS = 60  # a reference curve in the page: its shape at a glance (the page's first view stays light)


def _shown(points: list[list[float]]) -> list[list[float]]:
    """The points the page embeds: every k-th and the last, at most SHOWN_POINTS (the numbers the prose quotes come
    from every step)."""
    from attention_course.widgets.training_curve.widget import thin

    return thin(points, SHOWN_POINTS)


def reference_curve(name: str, build: Any = None) -> dict[str, Any]:
    """The `training-curve` widget's data for a run: the curve, its references and markers, and its quotes (named
    `<run> <number>`, e.g. ``{data}`training-curve induction crossed` ``)."""
    r = results(name, build)
    if name == "induction":
        vocab = INDUCTION["task"]["vocab"]
        names = ["全部位置", "可以照抄的位置", "归纳得分"]
        best = max(range(len(r["induction"][-1])), key=lambda h: r["induction"][-1][h])
        # two stretches of the copy loss (smoothed over 11 steps): down to what "one of the letters seen" gives,
        # then from there to the threshold
        bag = seen_letter_loss()
        copy, score = _smoothed(r["points"][1]), _smoothed(r["points"][2])
        slow_end = int(np.argmax(copy < bag))
        quotes = {
            "crossed": f"{r['crossed']}",
            "steps": f"{INDUCTION['steps']}",
            "copy_loss_end": f"{r['points'][1][-1][1]:.2f}",
            "loss_end": f"{r['points'][0][-1][1]:.2f}",
            "score_start": f"{r['points'][2][0][1]:.2f}",
            "score_end": f"{r['induction'][-1][best]:.2f}",
            "best_head": f"第 {len(r['induction']) - 1} 层第 {best} 个头",
            "previous_best": f"{max(r['previous'][0]):.2f}",
            "uniform_loss": f"{np.log(vocab):.2f}",
            "params": f"{r['params']:,}",
            "copy_threshold": f"{COPY_LOSS}",
            "score_threshold": f"{INDUCTION_SCORE}",
            "seen_letter_loss": f"{bag:.2f}",
            "copy_start": f"{copy[0]:.2f}",
            "slow_end": f"{slow_end}",
            "fast_steps": f"{r['crossed'] - slow_end}",
            "score_at_slow_end": f"{score[slow_end]:.2f}",
            "score_at_crossed": f"{score[r['crossed']]:.2f}",
            "vocab": f"{vocab}",
            "length": f"{INDUCTION['task']['length']}",
            "min_period": f"{INDUCTION['task']['min_period']}",
            "max_period": f"{INDUCTION['task']['max_period']}",
            "batch": f"{INDUCTION['batch']}",
        }
        return {
            "title": "重复序列任务（本站生成时训练的一次）",
            "x_label": "训练步数",
            "y_label": "损失（nats）/ 归纳得分",
            "x_max": INDUCTION["steps"],
            "series": [{"name": n, "points": _shown(p)} for n, p in zip(names, r["points"])],
            "references": [{"name": f"均匀乱猜 ln {vocab}", "value": round(float(np.log(vocab)), 4)}],
            "markers": [{"x": r["crossed"], "label": "归纳头出现"}] if r["crossed"] is not None else [],
            "status": f"第 {r['crossed']} 步越过门槛",
            "done": True,
            "quotes": {f"induction {k}": v for k, v in {**quotes, **_timing_quotes()}.items()},
        }
    models = r["models"]
    quotes = {
        "ppl": f"{r['ppl']:.0f}",
        "long_ppl": f"{r['long_ppl']:.0f}",
        "steps": f"{POEM_STEPS}",
        "long_steps": f"{POEM_LONG_STEPS:,}",
        "positions": f"{r['positions']:,}",
        "long_positions": f"{r['long_positions']:,}",
        "params": f"{r['params']:,}",
        "sample": r["sample"],
        "loss_start": f"{r['points'][0][0][1]:.2f}",
        "loss_end": f"{r['points'][0][-1][1]:.2f}",
        "unigram_ppl": f"{models['unigram']['ppl']:.0f}",
        "bigram_ppl": f"{models['bigram']['ppl']:.0f}",
        "mlp_ppl": f"{models['mlp']['ppl']:.0f}",
        "transformer_ppl": f"{models['transformer']['ppl']:.0f}",
        "transformer_positions": f"{models['transformer']['positions_seen']:,}",
        "positions_ratio": f"{models['transformer']['positions_seen'] / r['positions']:.0f}",
        "batch": f"{POEMS['batch']}",
        "context": f"{POEMS['model']['context']}",
        "vocab": f"{r['facts']['vocab']:,}",
        "train_every": f"{r['facts']['train_every']}",
        "held_every": f"{r['facts']['held_every']}",
        "held_poems": f"{r['facts']['held_poems']}",
        "held_targets": f"{r['facts']['held_targets']:,}",
        "embedding_share": f"{r['embedding_params'] / r['params'] * 100:.0f}%",
        "slice_gap": f"{r['slice_gap'] * 100:.1f}%",
    }
    return {
        "title": "唐诗（本站生成时训练的一次）",
        "y_min": 4.0,
        "x_label": "训练步数",
        "y_label": "损失（nats）",
        "x_max": POEM_STEPS,
        "series": [{"name": "训练损失", "points": _shown(r["points"][0])}],
        "references": [
            {"name": "二元模型", "value": round(float(models["bigram"]["nll"]), 4)},
            {"name": "MLP", "value": round(float(models["mlp"]["nll"]), 4)},
            {"name": "模块 07 的 Transformer", "value": round(float(models["transformer"]["nll"]), 4)},
        ],
        "markers": [],
        "status": f"第 {POEM_STEPS} 步 · 验证集困惑度 {r['ppl']:.0f}",
        "done": True,
        "quotes": {f"poems {k}": v for k, v in {**quotes, **_timing_quotes()}.items()},
    }


__all__ = ["COPY_LOSS", "INDUCTION", "INDUCTION_SCORE", "POEMS", "RUNS", "reference_curve", "results"]
