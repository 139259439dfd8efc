"""Functions for tests/engine/test_page_pool.py that a spawned worker process must be able to import."""

import threading
import time


def never_leave() -> None:
    """A pool initializer whose worker can never exit: a non-daemon thread that sleeps for ever (the interpreter
    waits for it at exit), like a worker that hangs while it shuts down."""
    threading.Thread(target=lambda: time.sleep(10_000), daemon=False).start()


def square(x: int) -> int:
    return x * x
