"""Cell executor that runs inside the Pyodide worker (also importable in CPython for tests).

One shared namespace per page, like a notebook.  `run_cell(code, filename)` executes `code`, returns the
repr of a trailing expression (Jupyter-style; a trailing `;` suppresses it), streams stdout/stderr through
`post(stream, text)` in batches (every FLUSH_INTERVAL s or FLUSH_BYTES), and caps the output of one run at
MAX_LINES lines / MAX_BYTES bytes: past the cap nothing more is forwarded, the code keeps running, and the
result says truncated=True.  Tracebacks keep only the frames of the user's cells ("<cell-N>").
"""
from __future__ import annotations

import ast
import builtins
import io
import linecache
import sys
import time
import traceback

MAX_LINES = 2000
MAX_BYTES = 200_000
FLUSH_INTERVAL = 0.05
FLUSH_BYTES = 64 * 1024
MAX_REPR = 200_000
CELL_PREFIX = "<cell-"


def _fresh_namespace() -> dict:
    return {"__name__": "__main__", "__builtins__": builtins, "__doc__": None}


namespace: dict = _fresh_namespace()
_post = None  # callable(stream: str, text: str)


def set_post(post) -> None:
    global _post
    _post = post


def reset() -> None:
    """Forget every user variable (a fresh notebook namespace)."""
    namespace.clear()
    namespace.update(_fresh_namespace())
    for key in [k for k in linecache.cache if k.startswith(CELL_PREFIX)]:
        del linecache.cache[key]


class _Output:
    """Shared budget + batching for one run (stdout and stderr together)."""

    def __init__(self, post) -> None:
        self.post = post
        self.lines = 0
        self.bytes = 0
        self.truncated = False
        self.pending: list[tuple[str, str]] = []
        self.pending_bytes = 0
        self.last_flush = time.monotonic()

    def write(self, stream: str, s: str) -> None:
        if self.truncated or not s:
            return
        nbytes = len(s.encode("utf-8", "replace"))
        nlines = s.count("\n")
        if self.lines + nlines > MAX_LINES or self.bytes + nbytes > MAX_BYTES:
            # keep what fits (whole lines up to MAX_LINES, bytes up to MAX_BYTES), then stop forwarding
            keep_lines = MAX_LINES - self.lines
            cut = len(s)
            if self.lines + nlines > MAX_LINES:
                pos = -1
                for _ in range(keep_lines):
                    pos = s.find("\n", pos + 1)
                cut = pos + 1
            room = MAX_BYTES - self.bytes
            part = s[:cut].encode("utf-8", "replace")[:max(room, 0)].decode("utf-8", "ignore")
            if part:
                self._queue(stream, part)
            self.truncated = True
            self.flush()
            return
        self.lines += nlines
        self.bytes += nbytes
        self._queue(stream, s)
        if self.pending_bytes >= FLUSH_BYTES or time.monotonic() - self.last_flush >= FLUSH_INTERVAL:
            self.flush()

    def _queue(self, stream: str, s: str) -> None:
        if self.pending and self.pending[-1][0] == stream:
            self.pending[-1] = (stream, self.pending[-1][1] + s)
        else:
            self.pending.append((stream, s))
        self.pending_bytes += len(s)

    def flush(self) -> None:
        pending, self.pending, self.pending_bytes = self.pending, [], 0
        self.last_flush = time.monotonic()
        if self.post is not None:
            for stream, text in pending:
                self.post(stream, text)


class _Stream(io.TextIOBase):
    def __init__(self, out: _Output, name: str) -> None:
        super().__init__()
        self._out = out
        self._name = name

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"<{self._name}>"

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, s) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self._out.write(self._name, s)
        return len(s)

    def flush(self) -> None:
        self._out.flush()


def _format_error(exc: BaseException) -> dict:
    if isinstance(exc, SyntaxError) and not (exc.__traceback__ and any(
            f.filename.startswith(CELL_PREFIX) for f in traceback.extract_tb(exc.__traceback__))):
        lines = traceback.format_exception_only(type(exc), exc)
    else:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(CELL_PREFIX)]
        lines = []
        if frames:
            lines.append("Traceback (most recent call last):\n")
            lines.extend(traceback.StackSummary.from_list(frames).format())
        lines.extend(traceback.format_exception_only(type(exc), exc))
    message = str(exc) if not isinstance(exc, SyntaxError) else (exc.msg or str(exc))
    return {"type": type(exc).__name__, "message": message, "traceback": "".join(lines)}


def execute_notebook_cell(code: str, filename: str, ns: dict, max_repr: int) -> tuple[str | None, bool]:
    """Run `code` in `ns` like a notebook cell; returns (repr of a trailing expression or None, repr cut?).

    The one definition of cell semantics, shared by the browser (run_cell below) and the build
    (builder/cells.py imports this file), so both print the same. Exceptions of the code propagate.
    """
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    tree = ast.parse(code, filename, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not code.rstrip().endswith(";"):
        last = ast.Expression(tree.body.pop().value)  # Jupyter-style: show a trailing expression's repr
    exec(compile(tree, filename, "exec"), ns)
    if last is None:
        return None, False
    value = eval(compile(last, filename, "eval"), ns)
    if value is None:
        return None, False
    ns["_"] = value
    text = repr(value)
    if len(text) > max_repr:
        return text[:max_repr] + "…", True
    return text, False


def run_cell(code: str, filename: str = "<cell-1>") -> dict:
    """Execute one cell in the shared namespace → {ok, repr, error, truncated}."""
    out = _Output(_post)
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Stream(out, "stdout"), _Stream(out, "stderr")
    result = {"ok": True, "repr": None, "error": None, "truncated": False}
    try:
        result["repr"], result["truncated"] = execute_notebook_cell(code, filename, namespace, MAX_REPR)
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, incl. SystemExit
        result["ok"] = False
        result["error"] = _format_error(exc)
    finally:
        sys.stdout, sys.stderr = old
        out.flush()
    result["truncated"] = result["truncated"] or out.truncated
    return result
