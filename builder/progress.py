"""What a build is doing, on stderr: progress for its long steps and, at the end, where the time went.

Off unless the command line turns it on (`enable`, builder/cli.py): the engine used as a library, the tests and the
page pool's worker processes print nothing through it. On a terminal (stderr is a tty) a long step is one line
redrawn in place — a bar with counts or bytes when its size is known, else the seconds it has run — and ends as a
plain line; anywhere else (a CI log) every line is a plain line: one when a step starts, one at each quarter of a
step whose size is known, one when it ends. Which lines are printed depends only on the work the build does (what
its caches miss), never on timing; only the seconds and the bytes seen so far vary. Nothing of it reaches the site.

    with progress.stage("run cells"):                 # a stage of the build: its seconds go into the summary
        with progress.step("running code cells", total=12, unit="cells") as step:
            step.advance(3)
    with progress.transfer("downloading x (73 MB)", total=73_000_000, folder=tmp):
        subprocess.run(...)                           # bytes counted as they appear under `folder`

Stages nest: a stage's seconds are its own, without those of the stages inside it, so the summary adds up to the
build. Stages and steps are opened by the build's main thread; `Step.advance` may be called from any thread.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

BAR_WIDTH = 24
REDRAW_S = 0.1  # a terminal line is redrawn at most this often …
TICK_S = 0.5  # … and at least this often while a step runs (its seconds move on)
POLL_S = 0.25  # how often a transfer measures its folder


class Step:
    """One long step: `advance(n)` as its parts are done (counts or bytes), or `update(done)`."""

    def __init__(self, reporter: Reporter | None, label: str, total: int | None, unit: str):
        self.reporter, self.label, self.total, self.unit = reporter, label, total, unit
        self.done = 0
        self.started = time.perf_counter()
        self._quarters = 0  # quarters of `total` already reported on plain lines

    def advance(self, n: int = 1) -> None:
        self.update(self.done + n)

    def update(self, done: int) -> None:
        if self.reporter is None:
            return
        with self.reporter.lock:
            self.done = done
            self.reporter._changed(self)

    def amount(self, done: int | None = None) -> str:
        done = self.done if done is None else done
        if self.unit == "bytes":
            total = f" / {_mb(self.total)}" if self.total else ""
            return f"{_mb(done)}{total}"
        total = f"/{self.total}" if self.total is not None else ""
        return f"{done}{total} {self.unit}".rstrip()


class Reporter:
    """Where progress goes: `stream`, redrawn in place when `tty`, else as plain lines."""

    def __init__(self, stream: TextIO, tty: bool):
        self.stream, self.tty = stream, tty
        self.lock = threading.RLock()
        self.stages: dict[str, float] = {}  # stage → its own seconds, in the order the stages first ran
        self._stack: list[list] = []  # open stages: [name, started, seconds of the stages inside]
        self._steps: list[Step] = []  # open steps, innermost last (the one a terminal shows)
        self._drawn = 0.0  # when the terminal line was last drawn
        self._live = False  # a terminal line is on screen and must be cleared before a plain line
        self._ticker: threading.Thread | None = None
        self.started = time.perf_counter()

    # -------------------------------------------------------------------------------------------- stages

    def open_stage(self, name: str) -> None:
        self.stages.setdefault(name, 0.0)
        self._stack.append([name, time.perf_counter(), 0.0])

    def close_stage(self) -> None:
        name, started, inner = self._stack.pop()
        took = time.perf_counter() - started
        self.stages[name] += took - inner
        if self._stack:
            self._stack[-1][2] += took

    def summary(self) -> str:
        """Where the time went: every stage's own seconds, in the order the stages ran, and the total."""
        total = time.perf_counter() - self.started
        width = max((len(name) for name in self.stages), default=0)
        lines = [f"time: {total:.1f} s in all"]
        lines += [f"  {name:<{width}}  {seconds:6.1f} s" for name, seconds in self.stages.items()]
        return "\n".join(lines)

    # -------------------------------------------------------------------------------------------- steps

    def open_step(self, step: Step) -> None:
        with self.lock:
            self._steps.append(step)
            if self.tty:
                self._draw(force=True)
                self._start_ticker()
            else:
                size = _mb(step.total) if step.unit == "bytes" else f"{step.total} {step.unit}".rstrip()
                self._print(f"{step.label} ({size}) …" if step.total else f"{step.label} …")

    def close_step(self, step: Step, failed: bool) -> None:
        with self.lock:
            self._steps.remove(step)
            seconds = time.perf_counter() - step.started
            amount = f"{step.amount()}, " if step.total is not None or step.done else ""
            self._print(f"{step.label}: {'stopped' if failed else 'done'} ({amount}{seconds:.1f} s)")
            if self.tty and self._steps:
                self._draw(force=True)

    def _changed(self, step: Step) -> None:
        if self.tty:
            self._draw()
        elif step.total and step.done < step.total:  # the end is the step's closing line
            quarters = step.done * 4 // step.total
            while step._quarters < quarters:
                step._quarters += 1
                self._print(f"{step.label}: {25 * step._quarters}% ({step.amount()})")

    # -------------------------------------------------------------------------------------------- output

    def _print(self, line: str) -> None:
        if self._live:
            self.stream.write("\r\x1b[K")
            self._live = False
        self.stream.write(line + "\n")
        self.stream.flush()

    def _draw(self, force: bool = False) -> None:
        now = time.perf_counter()
        if not self._steps or (not force and now - self._drawn < REDRAW_S):
            return
        self._drawn = now
        step = self._steps[-1]
        seconds = f"{now - step.started:.0f} s"
        if step.total:
            filled = min(BAR_WIDTH, BAR_WIDTH * step.done // step.total)
            bar = "█" * filled + "░" * (BAR_WIDTH - filled)
            line = f"{step.label} {bar} {100 * step.done // step.total:3d}% {step.amount()}  {seconds}"
        else:
            amount = f"{step.amount()}  " if step.done else ""
            line = f"{step.label} … {amount}{seconds}"
        columns = _columns(self.stream)
        if len(line) > columns - 1:
            line = line[: columns - 2] + "…"
        self.stream.write("\r\x1b[K" + line)
        self.stream.flush()
        self._live = True

    def _start_ticker(self) -> None:
        if self._ticker is not None and self._ticker.is_alive():
            return

        def tick() -> None:
            while True:
                time.sleep(TICK_S)
                with self.lock:
                    if not self._steps:
                        self._ticker = None
                        return
                    self._draw(force=True)

        self._ticker = threading.Thread(target=tick, name="progress", daemon=True)
        self._ticker.start()


_reporter: Reporter | None = None


def enable(stream: TextIO | None = None, *, tty: bool | None = None) -> Reporter:
    """Report progress on `stream` (stderr) from now on; `tty` defaults to whether the stream is a terminal."""
    global _reporter
    stream = stream if stream is not None else sys.stderr
    if tty is None:
        tty = bool(getattr(stream, "isatty", lambda: False)()) and os.environ.get("TERM") != "dumb"
    _reporter = Reporter(stream, tty)
    return _reporter


def disable() -> None:
    global _reporter
    _reporter = None


def active() -> Reporter | None:
    return _reporter


def summary() -> str | None:
    """Where the time went since `enable` (None when progress is off)."""
    return _reporter.summary() if _reporter is not None else None


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """A stage of the build: its own seconds are added up under `name` for the summary."""
    reporter = _reporter
    if reporter is None:
        yield
        return
    reporter.open_stage(name)
    try:
        yield
    finally:
        reporter.close_stage()


@contextlib.contextmanager
def step(label: str, total: int | None = None, unit: str = "", *, always: bool = False) -> Iterator[Step]:
    """A long step, shown while it runs and named when it ends (see the module's docstring). `always`: with
    progress off, `label …` is still printed on stderr when the step starts (a download, a first preparation: what
    the build always said)."""
    reporter = _reporter
    current = Step(reporter, label, total, unit)
    if reporter is None:
        if always:
            print(f"{label} …", file=sys.stderr, flush=True)
        yield current
        return
    reporter.open_step(current)
    failed = True
    try:
        yield current
        failed = False
    finally:
        reporter.close_step(current, failed)


@contextlib.contextmanager
def transfer(label: str, total: int, folder: Path) -> Iterator[Step]:
    """A download by another program (pip, npm) into `folder`: its bytes are those of the largest file there so far
    (the archive as it arrives; pip and npm then copy it once more and remove their temporary files), at most
    `total`.
    With progress off, the one line the build always printed (`label …`) is printed instead."""
    with step(label, total=total or None, unit="bytes", always=True) as current:
        if _reporter is None:
            yield current
            return
        stop = threading.Event()

        def measure() -> None:
            seen = max(current.done, _largest_file(folder))
            current.update(min(seen, total) if total else seen)

        def poll() -> None:
            while not stop.wait(POLL_S):
                measure()

        watcher = threading.Thread(target=poll, name="progress-transfer", daemon=True)
        watcher.start()
        try:
            yield current
        finally:
            stop.set()
            watcher.join()
            measure()


def _largest_file(folder: Path) -> int:
    largest = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                largest = max(largest, os.lstat(os.path.join(dirpath, name)).st_size)
    return largest


def _mb(n: int | None) -> str:
    return f"{(n or 0) / 1e6:.1f} MB"


def _columns(stream: TextIO) -> int:
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, AttributeError, ValueError):
        return 80
    return columns if columns >= 20 else 80  # a pseudo-terminal may say 0


__all__ = ["Reporter", "Step", "active", "disable", "enable", "stage", "step", "summary", "transfer"]
