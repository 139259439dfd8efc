"""Cell executor that runs inside the Pyodide worker (also importable in CPython for tests).

One shared namespace per page, like a notebook.  `run_cell(code, filename)` executes `code`, returns the
repr of a trailing expression (Jupyter-style; a trailing `;` suppresses it), streams stdout/stderr through
`post(stream, text)` in batches (every FLUSH_INTERVAL s or FLUSH_BYTES), and caps the output of one run at
MAX_LINES lines / MAX_BYTES bytes: past the cap nothing more is forwarded, the code keeps running, and the
result says truncated=True.  Tracebacks keep only the frames of the user's cells ("<cell-N>").

Rich output ("displays") goes through `display(kind, data, meta)` to the callback of `set_display`: figures
(`image/png` bytes: `plt.show()`, and every figure still open when a cell ends, drawn with Agg) and the
course's own widgets (`application/vnd.course.widget+json`: attention_core.display's JSON).  Never HTML: the
page builds an <img> from the bytes, or mounts its own widget module with the JSON.  A display whose meta has
`"update": <name>` replaces the run's earlier display of that name in place (a live chart redrawn while a loop
runs), and only its first showing counts against MAX_DISPLAYS.

A cell may `await` at its top level, as in Jupyter: `run_cell` then returns a coroutine that the worker awaits.
`await pause()` is how a long loop lets the page breathe: while Python waits there, the worker reads its
messages, and a 停止 the page sent (`request_stop`) raises KeyboardInterrupt at that `await` — the loop ends
between two of its steps and every variable stays as it was. The first `pause()` of a run tells the page
(`set_on_pause`) that this run can be stopped that way, so 停止 asks it to stop instead of ending the worker.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import inspect
import io
import linecache
import os
import sys
import time
import traceback
import types

# Agg, before any cell imports matplotlib: no GUI, no Pyodide canvas backend (its matplotlibrc names none).
os.environ.setdefault("MPLBACKEND", "agg")

MAX_LINES = 2000
MAX_BYTES = 200_000
FLUSH_INTERVAL = 0.05
FLUSH_BYTES = 64 * 1024
MAX_REPR = 200_000
CELL_PREFIX = "<cell-"
MAX_DISPLAYS = 20  # figures/widgets one run may show; more are dropped and the run says truncated
FIGURE_DPI = 144  # PNG pixels per inch: 640 CSS px wide figures (6.4 in) stay sharp on 1.5× screens
FIGURE_CSS_DPI = 100  # …shown at matplotlib's nominal size (the <img>'s width = pixels × 100 / 144)
MATPLOTLIB_IMPORTS = frozenset({"matplotlib", "pylab", "mpl_toolkits"})


def _fresh_namespace() -> dict:
    return {"__name__": "__main__", "__builtins__": builtins, "__doc__": None}


namespace: dict = _fresh_namespace()
_post = None  # callable(stream: str, text: str)
_display = None  # callable(kind: str, data: bytes | str, meta: dict)
_displays_this_run = 0
_display_truncated = False
_display_names: set[str] = set()  # the names of this run's updatable displays shown so far
_on_pause = None  # callable(): this run has reached `await pause()` (it can stop between its steps)
_paused_this_run = False
_stop_requested = False
TOP_LEVEL_AWAIT = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT


def set_post(post) -> None:
    global _post
    _post = post


def set_display(callback) -> None:
    global _display
    _display = callback


def set_on_pause(callback) -> None:
    global _on_pause
    _on_pause = callback


def request_stop() -> None:
    """停止 for a run that pauses: its next `await pause()` raises KeyboardInterrupt (the worker calls this)."""
    global _stop_requested
    _stop_requested = True


def stop_requested() -> bool:
    return _stop_requested


async def pause() -> None:
    """Let the page breathe between two steps of a long loop (`await pause()`): the worker reads the page's
    messages meanwhile, so a 停止 ends the run right here with KeyboardInterrupt, every variable kept. Costs a
    few milliseconds: call it a few times a second, not in every round of a tight loop."""
    global _paused_this_run
    if not _paused_this_run:
        _paused_this_run = True
        if _on_pause is not None:
            _on_pause()
    await asyncio.sleep(0)
    if _stop_requested:
        raise KeyboardInterrupt("停止")


# Where Stop can only end the worker (no interrupt buffer: a page that is not cross-origin isolated), WebKit does not
# end a worker that is busy in a loop which never calls out of WebAssembly (`while True: pass`): the old worker went
# on using a core and its memory after each Stop, and each restart took longer (7, 23, 141 s). Once stoppable loops
# are on (runtime.js turns them on in WebKit only), every loop in the reader's code calls into JavaScript every
# LOOP_TICK_EVERY rounds, where the engine can end the worker. sys.monitoring events on the reader's code objects
# only: library code runs as it did; a tight pure-Python loop takes about 2.4× as long.
LOOP_TICK_EVERY = 1000
_LOOP_TOOL = 4  # a sys.monitoring tool id CPython leaves free (0–2 and 5 are named)
_loop_tick = None  # a JavaScript function, once enable_stoppable_loops() ran
_loop_rounds = 0


def _on_jump(code, offset, destination):
    global _loop_rounds
    if destination < offset:  # the jump back to a loop's head
        _loop_rounds += 1
        if _loop_rounds >= LOOP_TICK_EVERY:
            _loop_rounds = 0
            _loop_tick()


def enable_stoppable_loops() -> None:
    """In the worker, when Stop ends workers: from now on, make_stoppable() marks the code it is given."""
    global _loop_tick
    import js  # Pyodide's bridge: a call through it leaves WebAssembly

    _loop_tick = js.Date.now
    sys.monitoring.use_tool_id(_LOOP_TOOL, "course-stoppable-loops")
    sys.monitoring.register_callback(_LOOP_TOOL, sys.monitoring.events.JUMP, _on_jump)


def make_stoppable(code: types.CodeType) -> types.CodeType:
    """`code`, with its loops and those of every function or class it defines calling out now and then (when
    enabled); the code object itself is unchanged."""
    if _loop_tick is None:
        return code
    pending = [code]
    while pending:
        each = pending.pop()
        sys.monitoring.set_local_events(_LOOP_TOOL, each, sys.monitoring.events.JUMP)
        pending.extend(c for c in each.co_consts if isinstance(c, types.CodeType))
    return code


def display(kind: str, data, meta: dict | None = None) -> None:
    """Show rich output after what the cell printed so far (stdout is flushed first, to keep the order). With
    `meta["update"]`, a later display of the same name replaces this one where it stands."""
    global _displays_this_run, _display_truncated
    name = (meta or {}).get("update")
    if name is None or name not in _display_names:
        if _displays_this_run >= MAX_DISPLAYS:
            _display_truncated = True
            return
        _displays_this_run += 1
        if name is not None:
            _display_names.add(str(name))
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - a cell may have replaced them
        pass
    if _display is not None:
        _display(kind, data, dict(meta or {}))


def imports_of(code: str) -> list[str]:
    """Top-level module names `code` imports (like Pyodide's find_imports; [] when it does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return sorted(names)


# ------------------------------------------------------------------------------------------- figures
_matplotlib_ready = False


def prepare_matplotlib() -> None:
    """Agg, the course's fonts (DejaVu Sans, then the CJK subset for Chinese), fixed-size figures on a white
    card (readable on the light and the dark theme alike), and `plt.show()` → the figure in the output."""
    global _matplotlib_ready
    if _matplotlib_ready:
        return
    import matplotlib
    import matplotlib._docstring

    # Likewise the property tables that matplotlib writes into the docstrings of plotting functions
    # (`%(Line2D:kwdoc)s` in plot(), bar(), …: ~0.2 s of the import, every table built from every setter's
    # docstring): those docstrings say where to get the table instead.
    matplotlib._docstring._ArtistKwdocLoader.__missing__ = _kwdoc_pointer
    import matplotlib.artist

    # Each Artist subclass matplotlib defines (~90 of them, while pyplot is imported) gets a `set()` whose
    # signature and docstring list every property, built from the docstrings of all its setters: a third of
    # pyplot's import in Pyodide (~0.45 s of 1.4 s, measured under Node). Only help() and IDEs read them — the
    # course's autocomplete is built at build time — so `set()` keeps only the mark matplotlib's own subclass
    # logic checks; setting properties is unchanged.
    matplotlib.artist.Artist._update_set_signature_and_docstring = classmethod(_plain_artist_set)
    matplotlib.use("agg")
    import matplotlib.pyplot as plt
    from cycler import cycler

    matplotlib.rcParams.update(
        {
            # Okabe–Ito: a colour-blind-safe qualitative palette (the course's widgets are too)
            "axes.prop_cycle": cycler(
                color=["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
            ),
            # per-glyph fallback (matplotlib ≥ 3.6) works across the families of font.family: Latin, then CJK
            "font.family": ["DejaVu Sans", "Noto Sans CJK SC"],
            "axes.unicode_minus": False,  # U+2212 is in DejaVu, but '-' keeps labels identical in every font
            "figure.facecolor": "white",
            "savefig.facecolor": "white",
            "figure.dpi": FIGURE_CSS_DPI,
            "svg.hashsalt": "course",
        }
    )
    plt.show = _show
    _matplotlib_ready = True


def matplotlib_ready() -> bool:
    return _matplotlib_ready


def _plain_artist_set(cls) -> None:
    cls.set._autogenerated_signature = True


KWDOC_POINTER = (
    "Properties:\n    （本课程的浏览器 Python 里省略了这张属性表：plt.setp(对象) 会列出它全部可设置的属性，"
    "plt.setp(对象, '属性名') 列出一个属性的取值。）"
)


def _kwdoc_pointer(loader: dict, key: str) -> str:
    if not key.endswith(":kwdoc"):
        raise KeyError(key)
    return loader.setdefault(key, KWDOC_POINTER)


def _show(*args, **kwargs) -> None:
    emit_figures()


def _png(fig) -> tuple[bytes, int, int]:
    buf = io.BytesIO()
    # metadata Software=None: no version string; PNG from Agg has no timestamp → identical bytes every run
    fig.savefig(buf, format="png", dpi=FIGURE_DPI, metadata={"Software": None})
    data = buf.getvalue()
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return data, width, height


def _figure_label(fig) -> str:
    titles = [fig._suptitle.get_text()] if getattr(fig, "_suptitle", None) else []
    titles += [ax.get_title() for ax in fig.axes if ax.get_title()]
    return "图：" + "；".join(titles) if titles else "matplotlib 图"


def emit_figures() -> None:
    """Every open figure → an image/png display, then closed (the next cell starts without them)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for num in plt.get_fignums():
        fig = plt.figure(num)
        data, width, height = _png(fig)
        display(
            "image/png",
            data,
            {
                "width": width,
                "height": height,
                "cssWidth": round(width * FIGURE_CSS_DPI / FIGURE_DPI),
                "cssHeight": round(height * FIGURE_CSS_DPI / FIGURE_DPI),
                "alt": _figure_label(fig),
            },
        )
    plt.close("all")


def _is_matplotlib_value(value) -> bool:
    """A plotting call's return value (Line2D lists, Axes, Text, …): its repr carries a memory address and
    says nothing the figure does not show, so it is not printed (like a notebook whose figure shows)."""
    items = value if isinstance(value, (list, tuple)) and value else [value]
    return all(type(v).__module__.split(".")[0] in ("matplotlib", "mpl_toolkits") for v in items)


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
            part = s[:cut].encode("utf-8", "replace")[: max(room, 0)].decode("utf-8", "ignore")
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
    if isinstance(exc, SyntaxError) and not (
        exc.__traceback__ and any(f.filename.startswith(CELL_PREFIX) for f in traceback.extract_tb(exc.__traceback__))
    ):
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


def execute_notebook_cell(code: str, filename: str, ns: dict, max_repr: int):
    """Run `code` in `ns` like a notebook cell; returns (repr of a trailing expression or None, repr cut?) — or,
    when the code awaits at its top level, a coroutine that runs it and returns the same (await it).

    The one definition of cell semantics, shared by the browser (run_cell below) and the build
    (builder/cells/executor.py imports this file), so both print the same. Exceptions of the code propagate.
    """
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    tree = ast.parse(code, filename, "exec")
    if MATPLOTLIB_IMPORTS.intersection(imports_of(code)):
        prepare_matplotlib()
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not code.rstrip().endswith(";"):
        last = ast.Expression(tree.body.pop().value)  # Jupyter-style: show a trailing expression's repr
    body = make_stoppable(compile(tree, filename, "exec", flags=TOP_LEVEL_AWAIT))
    tail = None if last is None else make_stoppable(compile(last, filename, "eval", flags=TOP_LEVEL_AWAIT))
    if any(c is not None and c.co_flags & inspect.CO_COROUTINE for c in (body, tail)):
        return _execute_awaiting(body, tail, ns, max_repr)
    try:
        exec(body, ns)
        value = None if tail is None else eval(tail, ns)
    finally:
        emit_figures()  # a figure left open at the end of the cell is shown (also when the cell raised)
    return _shown(value, ns, max_repr)


async def _execute_awaiting(body, tail, ns: dict, max_repr: int) -> tuple[str | None, bool]:
    """`execute_notebook_cell` for code that awaits at its top level (eval of such code gives a coroutine)."""
    try:
        ran = eval(body, ns)
        if inspect.isawaitable(ran):
            await ran
        value = None if tail is None else eval(tail, ns)
        if tail is not None and tail.co_flags & inspect.CO_COROUTINE:
            value = await value
    finally:
        emit_figures()
    return _shown(value, ns, max_repr)


def _shown(value, ns: dict, max_repr: int) -> tuple[str | None, bool]:
    if value is None or ("matplotlib" in sys.modules and _is_matplotlib_value(value)):
        return None, False
    ns["_"] = value
    text = repr(value)
    if len(text) > max_repr:
        return text[:max_repr] + "…", True
    return text, False


def begin_run() -> None:
    """Reset the per-run display budget and stop state (run_cell and the build's executor call it before each
    cell)."""
    global _displays_this_run, _display_truncated, _paused_this_run, _stop_requested
    _displays_this_run = 0
    _display_truncated = False
    _display_names.clear()
    _paused_this_run = False
    _stop_requested = False


def displays_truncated() -> bool:
    return _display_truncated


def run_cell(code: str, filename: str = "<cell-1>"):
    """Execute one cell in the shared namespace → {ok, repr, error, truncated}; a coroutine giving that dict
    when the cell awaits at its top level."""
    begin_run()
    out = _Output(_post)
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Stream(out, "stdout"), _Stream(out, "stderr")
    result = {"ok": True, "repr": None, "error": None, "truncated": False}
    try:
        shown = execute_notebook_cell(code, filename, namespace, MAX_REPR)
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, incl. SystemExit
        return _finish_run(result, out, old, error=exc)
    if inspect.iscoroutine(shown):
        return _run_awaiting(shown, result, out, old)
    return _finish_run(result, out, old, shown=shown)


async def _run_awaiting(shown, result: dict, out: _Output, old) -> dict:
    """The rest of `run_cell` for a cell that awaits: its output stays captured while it waits."""
    try:
        value = await shown
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, incl. SystemExit
        return _finish_run(result, out, old, error=exc)
    return _finish_run(result, out, old, shown=value)


def _finish_run(result: dict, out: _Output, old, *, shown=None, error: BaseException | None = None) -> dict:
    sys.stdout, sys.stderr = old
    out.flush()
    if error is not None:
        result["ok"] = False
        result["error"] = _format_error(error)
    else:
        result["repr"], result["truncated"] = shown
    result["truncated"] = result["truncated"] or out.truncated or _display_truncated
    return result
