"""What a training loop needs besides the model: an optimiser, a live loss curve, the repeated-sequence task, and
the measurements the hands-on module reads off a trained model (induction and previous-token scores, losses per
position, sampling, held-out perplexity). NumPy and `autograd.Tensor` only; the same code runs at build time and in
the browser's Python.

A loop in a code cell:

    curve = LiveCurve("重复序列任务", ["全部位置", "可以照抄的位置"], x_max=300)
    for step in range(300):
        x, y, copyable = task.batch(32)
        logits, _ = gpt(params, x, n_heads)
        loss = cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        await curve.add(step, loss.item(), token_losses(logits, y)[copyable].mean())

`curve.add` records the point and redraws the chart on the page at most every `every` seconds (a widget the page
updates in place); the `await` lets the page breathe: while Python waits there, the page's 停止 can end the loop
between two steps, and every parameter stays as it was (cell_runtime.pause). Without the `await` the curve still
updates, but 停止 then has to restart Python, and what was learned is lost.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .autograd import Tensor, parameters_of

WIDGET_KIND = "application/vnd.course.widget+json"
MAX_POINTS = 3000  # per series: a longer run keeps every other point (the curve's shape stays)


# --------------------------------------------------------------------------- optimiser


class AdamW:
    """Adam with decoupled weight decay: each parameter moves by its gradient's running mean over the running root
    mean square (both with bias correction), and matrices also shrink by lr · weight_decay each step."""

    def __init__(
        self,
        params: Any,
        lr: float = 3e-3,
        betas: tuple[float, float] = (0.9, 0.99),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        self.params = parameters_of(params)
        if not self.params:
            raise ValueError("no Tensor with requires_grad=True among the parameters")
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.steps = 0
        self.m = [np.zeros_like(p.data) for p in self.params]
        self.v = [np.zeros_like(p.data) for p in self.params]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        self.steps += 1
        b1, b2 = self.betas
        scale = self.lr / (1 - b1**self.steps)
        c2 = 1 - b2**self.steps
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:  # a parameter the loss did not reach this step
                continue
            g = p.grad
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            if self.weight_decay and p.data.ndim == 2:
                p.data *= 1 - self.lr * self.weight_decay
            p.data -= scale * m / (np.sqrt(v / c2) + self.eps)


def clip_grad_norm(params: Any, max_norm: float) -> float:
    """Scale all gradients together so that their joint length is at most `max_norm`; returns the length before."""
    tensors = [p for p in parameters_of(params) if p.grad is not None]
    norm = math.sqrt(sum(float((p.grad.astype(np.float64) ** 2).sum()) for p in tensors))
    if norm > max_norm:
        for p in tensors:
            p.grad *= max_norm / norm
    return norm


# --------------------------------------------------------------------------- measurements


def token_losses(logits: Tensor | np.ndarray, targets: np.ndarray) -> np.ndarray:
    """−log p(target) at every position (no gradient): (B, T, V) logits, (B, T) targets → (B, T) in nats."""
    z = np.asarray(logits.data if isinstance(logits, Tensor) else logits, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(log_p, np.asarray(targets)[..., None], axis=-1)[..., 0]


def previous_token_scores(weights: np.ndarray) -> np.ndarray:
    """Per head, the mean weight a position gives the position just before it: (B, h, T, T) → (h,)."""
    w = np.asarray(weights)
    T = w.shape[-1]
    return w[..., np.arange(1, T), np.arange(T - 1)].mean(axis=(0, 2))


def induction_scores(weights: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per head, the mean weight a position gives to the positions right after an earlier occurrence of its own
    token ("the last time I saw this token, what came next?"), over the positions whose token occurred before:
    (B, h, T, T) weights and (B, T) ids → (h,). Near 1: an induction head; a head that spreads its weight evenly
    scores about (earlier occurrences) / (positions it sees)."""
    w = np.asarray(weights)
    x = np.asarray(x)
    B, _, T, _ = w.shape
    # after[b, i, j]: j ≥ 1, j ≤ i, and token j − 1 equals token i
    same = x[:, :, None] == x[:, None, :]  # (B, T, T): token i equals token j
    after = np.zeros((B, T, T), dtype=bool)
    after[:, :, 1:] = same[:, :, :-1]
    after &= np.tril(np.ones((T, T), dtype=bool))
    rows = after.any(axis=-1)  # positions whose token occurred before
    if not rows.any():
        return np.zeros(w.shape[1])
    mass = (w * after[:, None]).sum(axis=-1)  # (B, h, T)
    return (mass * rows[:, None]).sum(axis=(0, 2)) / rows.sum()


# --------------------------------------------------------------------------- the repeated-sequence task


class RepeatTask:
    """Sequences of `length` tokens from a vocabulary of `vocab` letters: a random segment of distinct tokens, its
    length drawn from `min_period` … `max_period` for every sequence, repeated until the sequence is full.

    From the segment's second copy on, every next token can be copied: find the current token's previous
    occurrence and take what followed it — which a model can only do by looking back at the right place, with
    attention. The segment's length changes from sequence to sequence, so no fixed position holds the answer."""

    LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def __init__(self, vocab: int = 12, length: int = 20, min_period: int = 3, max_period: int = 7, seed: int = 0):
        if not 2 <= min_period <= max_period <= min(vocab, length // 2):
            raise ValueError("need 2 ≤ min_period ≤ max_period ≤ min(vocab, length / 2)")
        self.vocab, self.length = vocab, length
        self.min_period, self.max_period = min_period, max_period
        self.rng = np.random.default_rng(seed)

    def batch(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x, y, copyable): inputs (n, length), targets (the next tokens), and which targets can be copied."""
        rows = np.empty((n, self.length + 1), dtype=np.int64)
        copyable = np.zeros((n, self.length), dtype=bool)
        periods = self.rng.integers(self.min_period, self.max_period + 1, size=n)
        for i, period in enumerate(periods):
            segment = self.rng.permutation(self.vocab)[:period]
            rows[i] = np.resize(segment, self.length + 1)
            copyable[i, period:] = True  # position t predicts t + 1, a copy once t is in the second segment
        return rows[:, :-1], rows[:, 1:], copyable

    def tokens(self, ids: Sequence[int]) -> list[str]:
        """Letters for a sequence's ids (for drawing it)."""
        return [self.LETTERS[int(i)] for i in ids]


# --------------------------------------------------------------------------- sampling and perplexity


def sample(
    next_logits: Callable[[np.ndarray], np.ndarray],
    start: Sequence[int],
    *,
    steps: int,
    context: int,
    temperature: float = 1.0,
    rng: np.random.Generator | None = None,
    stop: int | None = None,
) -> list[int]:
    """Ids drawn one at a time after `start`: `next_logits(ids (1, t))` gives the logits of the last position; each
    new id is drawn from softmax(logits / temperature); at most `steps` ids, ending early at `stop`."""
    rng = rng or np.random.default_rng(0)
    ids = list(start)
    out: list[int] = []
    for _ in range(steps):
        window = np.asarray(ids[-context:], dtype=np.int64)[None]
        z = np.asarray(next_logits(window), dtype=np.float64) / max(temperature, 1e-6)
        p = np.exp(z - z.max())
        nxt = int(rng.choice(len(p), p=p / p.sum()))
        if stop is not None and nxt == stop:
            break
        out.append(nxt)
        ids.append(nxt)
    return out


def windows(n_targets: int, context: int) -> list[tuple[int, int, int]]:
    """(start, end, first scored) of the windows that score all `n_targets` targets of one sequence with at most
    `context` inputs each: inputs ids[start:end], positions first … end − start − 1 of the window are scored. A
    sequence that fits is one window; a longer one moves on by context / 2, so every target sees at least
    context / 2 tokens before it (all of them while the sequence fits)."""
    if context < 1:
        raise ValueError(f"context must be at least 1, got {context}")
    if n_targets <= context:
        return [(0, n_targets, 0)]
    out = [(0, context, 0)]
    done = context
    while done < n_targets:
        end = min(done + max(context // 2, 1), n_targets)  # context 1: one target per window (0 would never end)
        out.append((end - context, end, done - (end - context)))
        done = end
    return out


def mean_nll(logits_of: Callable[[np.ndarray], np.ndarray], sequences: Sequence[np.ndarray], context: int) -> float:
    """Mean −log p per target over whole sequences (each scored from its first token, every later token a
    target), windows as `windows`: `logits_of(x (B, t))` → (B, t, V). exp of it is the perplexity."""
    groups: dict[int, list[tuple[int, int, int, int]]] = {}
    for i, ids in enumerate(sequences):
        for s, e, first in windows(len(ids) - 1, context):
            groups.setdefault(e - s, []).append((i, s, e, first))
    total, count = 0.0, 0
    for length in sorted(groups):
        items = groups[length]
        for k in range(0, len(items), 32):
            chunk = items[k : k + 32]
            x = np.stack([sequences[i][s:e] for i, s, e, _ in chunk])
            y = np.stack([sequences[i][s + 1 : e + 1] for i, s, e, _ in chunk])
            nll = token_losses(logits_of(x), y)
            for row, (_, s, e, first) in enumerate(chunk):
                total += float(nll[row, first:].sum())
                count += e - s - first
    return total / max(count, 1)


# --------------------------------------------------------------------------- the live curve


class LiveCurve:
    """A loss curve on the page that grows while the loop runs (the course's `training-curve` widget, redrawn in
    place), with dashed reference lines; printed as text where there is no page."""

    def __init__(
        self,
        title: str,
        series: Sequence[str],
        *,
        x_max: int | None = None,
        references: dict[str, float] | None = None,
        x_label: str = "训练步数",
        y_label: str = "损失（nats）",
        y_min: float | None = None,
        every: float = 0.5,
    ) -> None:
        self.title, self.names = str(title), [str(s) for s in series]
        self.x_max, self.x_label, self.y_label, self.y_min = x_max, x_label, y_label, y_min
        self.references = [{"name": str(k), "value": float(v)} for k, v in (references or {}).items()]
        self.points: list[list[list[float]]] = [[] for _ in self.names]
        self.markers: list[dict[str, Any]] = []
        self.every = every
        self.started: float | None = None  # the first point of this run of the loop (用时 counts from there)
        self.last_draw = -math.inf
        self.last_pause = -math.inf
        self.status = ""
        self.done = False
        self._id = f"curve-{id(self)}"

    @property
    def seconds(self) -> float:
        return 0.0 if self.started is None else time.perf_counter() - self.started

    def add(self, step: int, *values: float) -> _Breath:
        """Record one point per series at `step` (as many values as series; None skips one) and redraw the chart when
        `every` seconds have passed. `await` it: the page can then stop the loop here (see the module's docstring)."""
        if len(values) != len(self.names):
            raise ValueError(f"curve.add(step, …) needs {len(self.names)} values ({', '.join(self.names)})")
        if self.started is None or self.done:  # a first point, or a loop run again after finish(): the clock starts
            self.started = time.perf_counter()
        self.done = False  # a curve that goes on after finish() (a loop run again) is live again
        for points, value in zip(self.points, values):
            if value is None:
                continue
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"the loss became {value} at step {step}: the learning rate may be too high")
            points.append([int(step), round(value, 4)])
            if len(points) > MAX_POINTS:
                del points[1:-1:2]
        now = time.perf_counter()
        if now - self.last_draw >= self.every:
            self.status = self._status(step)
            self.draw()
        return _Breath(self)

    def mark(self, step: int, label: str) -> None:
        """A vertical marker at `step` (e.g. where a threshold was crossed)."""
        self.markers.append({"x": int(step), "label": str(label)})

    def finish(self, note: str = "") -> None:
        """The run is over: the last points drawn, with `note` (or the last values) under the chart."""
        last = max((p[-1][0] for p in self.points if p), default=0)
        self.status = note or self._status(last, "完成")
        self.done = True
        self.draw()

    def _status(self, step: int, prefix: str = "") -> str:
        shown = [f"{name} {p[-1][1]:.3f}" for name, p in zip(self.names, self.points) if p]
        head = f"{prefix} · " if prefix else ""
        return f"{head}第 {step} 步 · " + " · ".join(shown) + f" · 用时 {self.seconds:.1f} 秒"

    def data(self) -> dict[str, Any]:
        bottom = {} if self.y_min is None else {"y_min": float(self.y_min)}  # else the axis starts at 0
        return {
            **bottom,
            "title": self.title,
            "x_label": self.x_label,
            "y_label": self.y_label,
            "x_max": self.x_max,
            "series": [{"name": n, "points": p} for n, p in zip(self.names, self.points)],
            "references": self.references,
            "markers": self.markers,
            "status": self.status,
            "done": self.done,
        }

    def draw(self) -> None:
        self.last_draw = time.perf_counter()
        runtime = sys.modules.get("cell_runtime")
        if runtime is None or not hasattr(runtime, "display"):
            if self.done:
                print(f"{self.title}: {self.status}")
            return
        spec = {"widget": "training-curve", "data": self.data()}
        runtime.display(WIDGET_KIND, json.dumps(spec, ensure_ascii=False, separators=(",", ":")), {"update": self._id})


class _Breath:
    """What `LiveCurve.add` returns: awaiting it lets the page breathe (cell_runtime.pause) a few times a second;
    a 停止 then ends the loop there, and the curve says at which step."""

    PAUSE_EVERY = 0.2  # seconds: a pause costs a few milliseconds of the worker's time

    def __init__(self, curve: LiveCurve) -> None:
        self.curve = curve

    def __await__(self):
        runtime = sys.modules.get("cell_runtime")
        now = time.perf_counter()
        if runtime is None or not hasattr(runtime, "pause") or now - self.curve.last_pause < self.PAUSE_EVERY:
            return None
        self.curve.last_pause = now
        try:
            yield from runtime.pause().__await__()
        except KeyboardInterrupt:
            last = max((p[-1][0] for p in self.curve.points if p), default=0)
            self.curve.finish(self.curve._status(last, "已停止") + "（参数停在这一步，可以接着用）")
            raise
        return None


__all__ = [
    "AdamW",
    "LiveCurve",
    "RepeatTask",
    "clip_grad_norm",
    "induction_scores",
    "mean_nll",
    "previous_token_scores",
    "sample",
    "token_losses",
    "windows",
]
