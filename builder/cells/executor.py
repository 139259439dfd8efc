"""Executing code cells in a child Python process: one namespace per page, in order, like a notebook.

Why a child process: a runaway cell (`while True: pass`) must become a clear build error, not a hung build,
and user code must not be able to disturb the builder's own state (sys.modules, cwd, stdout).

Protocol: the parent writes one JSON request on the child's stdin {paths, prelude, cells: [{filename, code}]};
the child answers one JSON line per event on its original stdout: {"ready": true}, then one result per cell.
User output never reaches that channel.
"""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import inspect
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..runtime import Runtime

try:
    from ..model import CELL_PREFIX
except ImportError:  # loaded as a plain module inside Pyodide (pyodide_cells.cjs): no builder package there
    CELL_PREFIX = "<cell-"

CELL_TIMEOUT_S = 30.0
"""Longest a single cell may run at build time before the build gives up on it, in Pyodide and in CPython alike
(docs/authoring.md says 30 s): wasm runs NumPy ~1.5–3× slower than CPython, and the build shares the CPU."""
STARTUP_TIMEOUT_S = 60.0
"""Time the child process may take to start and import NumPy."""
MAX_OUTPUT_LINES = 2000
"""Same cap as the browser runtime: a cell printing more is cut and marked truncated."""
MAX_OUTPUT_CHARS = 200_000
MAX_REPR_CHARS = 200_000

# Explicit defaults (NumPy's own) so that both interpreters print the same, whatever the environment set.
PRELUDE = (
    "import numpy as _np\n"
    "_np.set_printoptions(precision=8, threshold=1000, edgeitems=3, linewidth=75, suppress=False,\n"
    "                     nanstr='nan', infstr='inf', sign='-', floatmode='maxprec', legacy=False)\n"
    "del _np\n"
)


class _Capture:
    """A text stream that appends to a shared, capped list of (stream, text) chunks."""

    def __init__(self, sink: _Sink, name: str):
        self._sink, self.name = sink, name
        self.encoding = "utf-8"

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self._sink.write(self.name, s)
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True


class _Sink:
    def __init__(self) -> None:
        self.chunks: list[list[str]] = []
        self.updatable: dict[str, int] = {}  # a live display's name → its chunk
        self.lines = 0
        self.chars = 0
        self.truncated = False

    def display(self, kind: str, data, meta: dict) -> None:
        """A figure (bytes) or a course widget (JSON text): one ("display", JSON) chunk, in output order."""
        if self.truncated:
            return
        payload = base64.b64encode(data).decode("ascii") if isinstance(data, (bytes, bytearray)) else str(data)
        chunk = [
            "display",
            json.dumps({"kind": kind, "data": payload, "meta": meta}, ensure_ascii=False, sort_keys=True),
        ]
        name = meta.get("update")
        if name is not None:  # a live display: its last state is what the page keeps, where it was first shown
            where = self.updatable.get(name)
            if where is not None:
                self.chunks[where] = chunk
                return
            self.updatable[name] = len(self.chunks)
        self.chunks.append(chunk)

    def write(self, stream: str, s: str) -> None:
        if self.truncated or not s:
            return
        room_lines = MAX_OUTPUT_LINES - self.lines
        if s.count("\n") > room_lines or self.chars + len(s) > MAX_OUTPUT_CHARS:
            cut = len(s)
            if s.count("\n") > room_lines:
                pos = -1
                for _ in range(room_lines):
                    pos = s.find("\n", pos + 1)
                cut = pos + 1
            s = s[: min(cut, MAX_OUTPUT_CHARS - self.chars)]
            self.truncated = True
        self.lines += s.count("\n")
        self.chars += len(s)
        if s:
            if self.chunks and self.chunks[-1][0] == stream:
                self.chunks[-1][1] += s
            else:
                self.chunks.append([stream, s])


def _trimmed_traceback(exc: BaseException) -> tuple[str, list[tuple[str, int]]]:
    """Traceback text keeping only frames of user cells; also [(filename, line)] of those frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(CELL_PREFIX)]
    lines: list[str] = []
    if frames:
        lines.append("Traceback (most recent call last):\n")
        lines.extend(traceback.StackSummary.from_list(frames).format())
    lines.extend(traceback.format_exception_only(type(exc), exc))
    return "".join(lines), [(f.filename, f.lineno or 0) for f in frames]


CELL_RUNTIME = Path(__file__).resolve().parent.parent / "runtime" / "browser" / "cell_runtime.py"
"""The browser's cell executor: the build runs cells with the very same notebook semantics as the worker."""
EXERCISE_RUNTIME = CELL_RUNTIME.with_name("exercise_runtime.py")
"""The browser's exercise checker, importable by the build's runs too (builder/exercises/verify.py)."""


def _browser_executor():
    """cell_runtime.py (in Pyodide it is on sys.path; in CPython it is loaded from its file)."""
    module = sys.modules.get("cell_runtime")
    if module is None:
        try:
            import cell_runtime as module  # noqa: PLC0415 - Pyodide: written beside this file
        except ImportError:
            spec = importlib.util.spec_from_file_location("cell_runtime", CELL_RUNTIME)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)  # type: ignore[union-attr]
            sys.modules["cell_runtime"] = module
    return module


def execute_cell(code: str, filename: str, namespace: dict):
    """Run `code` in `namespace` like a notebook cell: the value of a trailing expression is the result. A cell
    that awaits at its top level gives a coroutine of the same result (`child_main` runs it with asyncio; in
    Pyodide, pyodide_cells.cjs awaits it on Pyodide's event loop)."""
    sink = _Sink()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Capture(sink, "stdout"), _Capture(sink, "stderr")  # type: ignore[assignment]
    started = time.perf_counter()
    runtime = _browser_executor()
    if hasattr(runtime, "set_display"):
        runtime.set_display(sink.display)
        runtime.begin_run()
    try:
        shown = runtime.execute_notebook_cell(code, filename, namespace, MAX_REPR_CHARS)
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, SystemExit included
        return _cell_result(sink, saved, started, runtime, filename, error=exc)
    if inspect.iscoroutine(shown):
        return _awaiting_cell(shown, sink, saved, started, runtime, filename)
    return _cell_result(sink, saved, started, runtime, filename, shown=shown)


async def _awaiting_cell(shown, sink: _Sink, saved, started: float, runtime, filename: str) -> dict:
    try:
        value = await shown
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, SystemExit included
        return _cell_result(sink, saved, started, runtime, filename, error=exc)
    return _cell_result(sink, saved, started, runtime, filename, shown=value)


def _cell_result(sink: _Sink, saved, started: float, runtime, filename: str, *, shown=None, error=None) -> dict:
    sys.stdout, sys.stderr = saved
    result: dict[str, Any] = {"repr": None, "error": None}
    if error is None:
        result["repr"], repr_cut = shown
        sink.truncated = (
            sink.truncated or repr_cut or (hasattr(runtime, "displays_truncated") and runtime.displays_truncated())
        )
    else:
        text, frames = _trimmed_traceback(error)
        own = [line for name, line in frames if name == filename]
        if isinstance(error, SyntaxError) and error.filename == filename:
            line = error.lineno or 1
        else:
            line = own[-1] if own else 1  # the innermost statement of *this* cell that was executing
        message = error.msg if isinstance(error, SyntaxError) else str(error)
        result["error"] = {"type": type(error).__name__, "message": message, "traceback": text, "line": line}
    result.update(chunks=sink.chunks, truncated=sink.truncated, seconds=round(time.perf_counter() - started, 4))
    return result


def child_main() -> None:
    """Protocol: one JSON request on stdin {paths, prelude, cells: [{filename, code}]}; one JSON line per
    event on the original stdout: {"ready": true}, then one result per cell. User output never reaches it."""
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything written to fd 1 behind Python's back lands on stderr, not in the protocol
    request = json.loads(sys.stdin.read())
    sys.path[:0] = request["paths"]  # the folders holding the course's browser packages
    exec(compile(request["prelude"], "<prelude>", "exec"), {})  # NumPy print options are process-global
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    proto.write(json.dumps({"ready": True}) + "\n")
    proto.flush()
    for cell in request["cells"]:
        result = execute_cell(cell["code"], cell["filename"], namespace)
        if inspect.iscoroutine(result):
            result = asyncio.run(result)
        proto.write(json.dumps(result, ensure_ascii=False) + "\n")
        proto.flush()
        if result["error"] and not cell.get("expect_error"):
            break


class CellRunError(Exception):
    """The child process died, hung or could not start: args = (index of the cell, message)."""


def run_cells_in_child(cells: list[dict], packages: list[Path], timeout: float | None = None) -> list[dict]:
    """Execute `cells` ([{filename, code, expect_error}]) in order in a fresh Python; one result per cell that ran.

    Stops after the first unexpected error. Raises CellRunError(index, message) if a cell exceeds
    `timeout` seconds or the process dies.
    """
    timeout = CELL_TIMEOUT_S if timeout is None else timeout
    paths = sorted({str(p.parent) for p in packages})
    request = {"paths": paths, "prelude": PRELUDE, "cells": cells}
    env = {
        **os.environ,
        "PYTHONHASHSEED": "0",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        # one BLAS thread: the same numbers on every machine (builder/numerics.py)
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    return _run_protocol(
        [sys.executable, "-c", "from builder.cells.executor import child_main; child_main()"],
        request,
        cells,
        cwd=Path(__file__).resolve().parent.parent.parent,
        env=env,
        startup=STARTUP_TIMEOUT_S,
        timeout=timeout,
        what="Python",
    )


PYODIDE_STARTUP_TIMEOUT_S = 240.0
"""Time Node may take to boot Pyodide and install NumPy (+ matplotlib): tens of seconds on a loaded machine."""
PYODIDE_PROGRAM = Path(__file__).resolve().with_name("pyodide_cells.cjs")


def run_cells_in_pyodide(cells: list[dict], runtime: Runtime, timeout: float | None = None) -> list[dict]:
    """Like `run_cells_in_child`, in the reader's runtime: Pyodide under Node (pyodide_cells.cjs) with the
    browser's own files (builder/runtime/distribution.py), Node's permission model (reads only those files; no
    writes but into an empty temporary folder, no processes or workers) and no code generation from strings."""
    import tempfile

    timeout = CELL_TIMEOUT_S if timeout is None else timeout
    files = {name: path.resolve() for name, path in runtime.files.items()}  # Node's checks see real paths
    core = files["pyodide.js"].parent
    lock = {
        **runtime.lock,
        "packages": {n: {**e, "file_name": str(files[e["file_name"]])} for n, e in runtime.lock["packages"].items()},
    }
    with tempfile.TemporaryDirectory(prefix="course-cells-") as tmp:
        lock_path = Path(tmp).resolve() / "pyodide-lock.json"
        lock_path.write_text(json.dumps(lock), "utf-8")
        spec_path = Path(tmp).resolve() / "spec.json"
        package_cache = Path(tmp).resolve() / "package-cache"
        package_cache.mkdir()
        spec = {
            "pyodideDir": str(core),
            "packageCacheDir": str(package_cache),
            "lockFile": str(lock_path),
            "preload": runtime.preload,
            "cellRuntime": str(CELL_RUNTIME),
            "exerciseRuntime": str(EXERCISE_RUNTIME),
            "executor": str(Path(__file__).resolve()),
            "env": {"HOME": "/home/pyodide", "MPLBACKEND": "agg"},
        }
        spec_path.write_text(json.dumps(spec), "utf-8")
        readable = [
            spec_path,
            lock_path,
            PYODIDE_PROGRAM,
            CELL_RUNTIME,
            EXERCISE_RUNTIME,
            Path(__file__).resolve(),
            core,
            *files.values(),
        ]
        # one flag per path (Node 20.20 no longer splits a comma list)
        paths = sorted({str(p) for p in readable})
        cmd = [
            shutil.which("node") or "node",
            "--experimental-permission",
            "--no-warnings",
            *(f"--allow-fs-read={p}" for p in paths),
            f"--allow-fs-write={package_cache}",
            "--disallow-code-generation-from-strings",
            str(PYODIDE_PROGRAM),
            str(spec_path),
        ]
        env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
        return _run_protocol(
            cmd,
            {"prelude": PRELUDE, "cells": cells},
            cells,
            cwd=Path(tmp),
            env=env,
            startup=PYODIDE_STARTUP_TIMEOUT_S,
            timeout=timeout,
            what="Pyodide",
        )


def _result(line: str) -> dict | None:
    """One cell's result line, or None when the line is not one (a runtime dying mid-cell writes anything)."""
    try:
        result = json.loads(line)
    except ValueError:
        return None
    return result if isinstance(result, dict) and "error" in result else None


EXIT_RE = re.compile(r"Program terminated with exit\((-?\d+)\)")
OUT_OF_MEMORY = (
    "Aborted(OOM)",
    "Out of memory",
    "out of memory",
    "Cannot enlarge memory",
    "Array buffer allocation failed",
    "RangeError: WebAssembly.Memory",
    "JavaScript heap out of memory",
)
STACK_LINE = re.compile(r"^\s*(at |\^|\.\.\.|Node\.js v|\{|\}|[\w$.]+: .*,$|/.*:\d+$)")


def died(what: str, returncode: int | None, stderr: str) -> str:
    """One short line on why the cells' process ended early (the words after "code cell 'x' "): what the cell did
    when that is recognisable (an exit, memory, the sandbox), else the first line the process said that is not a
    stack frame — never Node's or WebAssembly's stack itself."""
    text = stderr.strip()
    exited = EXIT_RE.search(text)
    if exited or (what == "Python" and returncode and returncode > 0 and not text):
        code = exited.group(1) if exited else returncode
        return (
            f"ended the {what} process with exit({code}) (os._exit?): a build-time cell must let Python finish; "
            "raise an exception to stop it on purpose"
        )
    if any(marker in text for marker in OUT_OF_MEMORY):
        return (
            f"crashed the {what} process: it ran out of memory (WebAssembly gives Python at most 4 GB; a huge "
            "figure or array?): make the data or the figure smaller"
        )
    if "ERR_ACCESS_DENIED" in text or "Access to this API has been restricted" in text:
        resource = re.search(r"resource: '([^']*)'", text)
        return (
            "crashed: it tried to reach the host (a file outside the runtime, a process or the network), which "
            "build-time cells cannot do" + (f" ({resource.group(1)})" if resource else "")
        )
    if returncode is not None and returncode < 0:
        import signal  # noqa: PLC0415 - here only: this module also runs inside Pyodide

        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"crashed the {what} process ({name})"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not STACK_LINE.match(ln)]
    if "fatal error was:" in text:  # Pyodide's own words ("… report this to the Pyodide maintainers") say nothing
        cause = (
            lines[lines.index("The cause of the fatal error was:") + 1 :]
            if "The cause of the fatal error was:" in lines
            else []
        )
        said = cause[0] if cause else "unknown"
        return f"crashed the {what} runtime (a fatal error in WebAssembly: {_short(said)}); the cell's code caused it"
    said = lines[0] if lines else ""
    return f"crashed the {what} process (exit code {returncode})" + (f": {_short(said)}" if said else "")


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _run_protocol(
    cmd: list[str], request: dict, cells: list[dict], *, cwd: Path, env: dict, startup: float, timeout: float, what: str
) -> list[dict]:
    """Start `cmd` in its own process group, send `request`, read {"ready"} then one result line per cell
    (each within `timeout` s); the whole group is killed at the end, whatever happened."""
    proc = subprocess.Popen(
        cmd,
        cwd=str(cwd),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
        encoding="utf-8",
        start_new_session=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    stderr_text: list[str] = []

    def pump_stdout() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def pump_stderr() -> None:
        assert proc.stderr is not None
        stderr_text.append(proc.stderr.read()[-4000:])

    threading.Thread(target=pump_stdout, daemon=True).start()
    stderr_pump = threading.Thread(target=pump_stderr, daemon=True)
    stderr_pump.start()
    results: list[dict] = []
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(request))
        proc.stdin.close()
        waits = [startup] + [timeout] * len(cells)
        for step, limit in enumerate(waits):
            running = max(step - 1, 0)  # index of the cell the child is busy with
            try:
                line = lines.get(timeout=limit)
            except queue.Empty:
                what = "did not finish" if step else f"could not start {what}"
                raise CellRunError(
                    running, f"{what} within {limit:g} s (infinite loop?); the build stopped it"
                ) from None
            result = _result(line) if line is not None and step else None
            if line is None or (step and result is None):  # the process ended, or broke the protocol dying
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
                # stdout's end can come before the stderr reader has stored what the process said last: wait for
                # it (a loaded machine once reported a crash without its message)
                stderr_pump.join(timeout=5)
                raise CellRunError(running, died(what, proc.returncode, "".join(stderr_text)))
            if step == 0:
                continue
            results.append(result)
            if results[-1]["error"] and not cells[step - 1]["expect_error"]:
                break  # the child stops after an unexpected error, too
    finally:
        try:
            os.killpg(proc.pid, 9)  # the child and anything it started
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    return results


if __name__ == "__main__":
    child_main()
