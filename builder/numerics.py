"""The same numbers whatever the machine: NumPy's BLAS runs on one thread during a build.

OpenBLAS splits a long dot product or a matrix product between its threads, and how it splits depends on their
number: on 2 cores a build computed the model's floats differently from a build told OPENBLAS_NUM_THREADS=1, and
since the cache keys do not (and should not) hold the machine's core count, whichever build filled the cache decided
what was published. So the build itself pins the BLAS (and OpenMP) thread pools to one thread with threadpoolctl —
in the building process (`one_blas_thread`, around the whole build) and in every process it starts that computes
with NumPy (`pin_blas_threads` in the page pool's workers; OPENBLAS_NUM_THREADS=1 & co. in the environment of the
CPython child that runs code cells without Node, builder/cells/executor.py). The
matrices of this course are small: one thread is also the faster (a 12-token forward pass of the model takes 0.1 s
on one thread, 0.5–5 s with threads on a busy machine).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def _limiter() -> Any:
    import numpy  # noqa: F401 - threadpoolctl limits only the libraries already loaded: load NumPy's BLAS first
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS and OpenMP on one thread inside the block (restored after it: the authoring server's process, a test's)."""
    with _limiter().limit(limits=1):
        yield


def pin_blas_threads() -> None:
    """BLAS and OpenMP on one thread for the rest of this process (a worker that only builds)."""
    _limiter().limit(limits=1)


__all__ = ["one_blas_thread", "pin_blas_threads"]
