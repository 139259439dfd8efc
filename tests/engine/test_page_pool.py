"""The page-rendering pool is shut down in bounded time even when a worker does not exit (builder/page_cache.py,
close_pool): the build has its results and must not hang on a stuck worker."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from builder.page_cache import close_pool
from tests.engine import pool_jobs


def gone(pid: int) -> bool:
    """The process has exited and been reaped (a zombie still has its pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_worker_that_never_exits_is_killed_after_the_grace_period() -> None:
    pool = ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn"), initializer=pool_jobs.never_leave)
    assert [f.result(timeout=120) for f in [pool.submit(pool_jobs.square, i) for i in range(4)]] == [0, 1, 4, 9]
    processes = list(pool._processes.values())
    assert len(processes) == 2 and all(p.is_alive() for p in processes)
    started = time.monotonic()
    close_pool(pool, grace_s=1.0)
    took = time.monotonic() - started
    # shutdown(wait=True) would wait for these workers for ever; close_pool kills them after the grace period
    assert took < 15, took
    assert [gone(p.pid) for p in processes] == [True, True]


def test_workers_that_exit_are_not_killed() -> None:
    pool = ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn"))
    assert pool.submit(pool_jobs.square, 7).result(timeout=120) == 49
    processes = list(pool._processes.values())
    close_pool(pool, grace_s=60.0)
    assert processes and [gone(p.pid) for p in processes] == [True] * len(processes)
    assert all(p.exitcode in (0, None) for p in processes)  # None: reaped by the executor's thread, not killed
