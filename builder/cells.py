"""Runnable code cells: ```{code-cell} python, executed at build time in CPython, edited and re-run in the browser.

Build side, in page order:

    parse  → a core rule collects the page's cells, checks their option lines, and executes them
             (one namespace per page, like a notebook) in a child Python process with a per-cell timeout;
             outputs are cached content-addressed under <cache_dir>/cells/ so a warm build executes nothing
    render → each cell becomes a highlighted <pre> of its source (readable without JavaScript) plus the
             captured "构建时输出"; theme/js/cells.js later swaps the <pre> for a CodeMirror editor
             (assets/editor.js, loaded only when the reader is about to edit or run code).

Why a child process: a runaway cell (`while True: pass`) must become a clear build error, not a hung build,
and user code must not be able to disturb the builder's own state (sys.modules, cwd, stdout).

The same `PRELUDE` (explicit NumPy print options) runs before the cells at build time and in the browser,
so CPython and Pyodide print arrays identically.
"""
from __future__ import annotations

import re
import hashlib
import importlib.metadata
import json
import os
import queue
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

from pygments import format as pygments_format
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer
from pygments.token import STANDARD_TYPES
from pygments.token import Token as PygmentsToken

from .errors import Code
from .plugins.directive import register_directive, report, split_option_lines

ROOT = Path(__file__).resolve().parent.parent

CELL_TIMEOUT_S = 10.0
"""Longest a single cell may run at build time before the build gives up on it."""
STARTUP_TIMEOUT_S = 60.0
"""Time the child process may take to start and import NumPy."""
MAX_OUTPUT_LINES = 2000
"""Same cap as the browser runtime: a cell printing more is cut and marked truncated."""
MAX_OUTPUT_CHARS = 200_000
MAX_REPR_CHARS = 200_000
EXECUTOR_VERSION = "1"
"""Bump when the executor's output format changes, to invalidate cached outputs."""

FLAG_OPTIONS = {"hide", "expect-error", "readonly"}
VALUE_OPTIONS = {"id"}
CELL_PREFIX = "<cell-"

# Explicit defaults (NumPy's own) so that both interpreters print the same, whatever the environment set.
PRELUDE = (
    "import numpy as _np\n"
    "_np.set_printoptions(precision=8, threshold=1000, edgeitems=3, linewidth=75, suppress=False,\n"
    "                     nanstr='nan', infstr='inf', sign='-', floatmode='maxprec', legacy=False)\n"
    "del _np\n"
)


# ------------------------------------------------------------------------------------------ data model


@dataclass
class CellOutput:
    """What one cell printed and returned; `chunks` keeps stdout/stderr interleaved in order."""

    chunks: list[tuple[str, str]] = field(default_factory=list)  # (stream, text), stream ∈ {stdout, stderr}
    repr: str | None = None
    error: dict | None = None  # {type, message, traceback, line}
    truncated: bool = False
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {"chunks": [list(c) for c in self.chunks], "repr": self.repr, "error": self.error,
                "truncated": self.truncated, "seconds": self.seconds}

    @classmethod
    def from_json(cls, data: dict) -> "CellOutput":
        return cls(chunks=[(s, t) for s, t in data.get("chunks", [])], repr=data.get("repr"),
                   error=data.get("error"), truncated=bool(data.get("truncated")),
                   seconds=float(data.get("seconds", 0.0)))


@dataclass
class Cell:
    token: Token
    id: str
    code: str
    code_offset: int  # lines from the fence line to the first line of code (1 + number of option lines)
    hide: bool = False
    expect_error: bool = False
    readonly: bool = False
    output: CellOutput | None = None

    @property
    def filename(self) -> str:
        return f"{CELL_PREFIX}{self.id}>"

    @property
    def element_id(self) -> str:
        """The HTML id (a link target): prefixed, because authors reuse a section's id for its cell."""
        return self.id if self.id.startswith("cell-") else f"cell-{self.id}"

    @property
    def source_hash(self) -> str:
        return hashlib.sha256(self.code.encode("utf-8")).hexdigest()[:16]


# --------------------------------------------------------------------------------------- option parsing


def parse_cell(token: Token, env: dict, index: int, seen_ids: set[str]) -> Cell | None:
    """Check a cell's language and option lines; report every problem as path:line. None if unusable."""
    ok = True
    lang = token.info.strip()
    if lang != "python":
        report(env, Code.CELL, token,
               f"code cell language must be 'python', got '{lang}'" if lang else
               "code cell needs a language: write ```{code-cell} python")
        ok = False
    options, code, consumed = split_option_lines(token.content)
    values: dict[str, str] = {}
    for line_index, key, value in options:
        offset = 1 + line_index
        if key in FLAG_OPTIONS:
            if value:
                report(env, Code.CELL, token, f"code cell option ':{key}:' is a flag and takes no value (got '{value}')",
                       offset=offset)
                ok = False
        elif key in VALUE_OPTIONS:
            if not value:
                report(env, Code.CELL, token, f"code cell option ':{key}:' needs a value", offset=offset)
                ok = False
        else:
            known = ", ".join(f":{k}:" for k in sorted(FLAG_OPTIONS | VALUE_OPTIONS))
            report(env, Code.CELL, token, f"unknown code cell option ':{key}:' (known: {known})", offset=offset)
            ok = False
            continue
        if key in values:
            report(env, Code.CELL, token, f"code cell option ':{key}:' given twice", offset=offset)
            ok = False
        values[key] = value
    cell_id = values.get("id") or f"cell-{index}"
    if "id" in values:
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", cell_id):
            line_index = next(i for i, k, _ in options if k == "id")
            report(env, Code.CELL, token, f"code cell id '{cell_id}' must be letters, digits, '-' or '_' "
                                          f"and start with a letter", offset=1 + line_index)
            ok = False
    if cell_id in seen_ids:
        line_index = next((i for i, k, _ in options if k == "id"), -1)
        report(env, Code.CELL, token, f"duplicate code cell id '{cell_id}' on this page", offset=1 + line_index)
        ok = False
    seen_ids.add(cell_id)
    if not code.strip():
        report(env, Code.CELL, token, f"code cell '{cell_id}' is empty")
        ok = False
    if not ok:
        return None
    return Cell(token=token, id=cell_id, code=code.rstrip("\n") + "\n", code_offset=1 + consumed,
                hide="hide" in values, expect_error="expect-error" in values, readonly="readonly" in values)


# ------------------------------------------------------------------------- the child process (executor)


class _Capture:
    """A text stream that appends to a shared, capped list of (stream, text) chunks."""

    def __init__(self, sink: "_Sink", name: str):
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
        self.lines = 0
        self.chars = 0
        self.truncated = False

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
            s = s[:min(cut, MAX_OUTPUT_CHARS - self.chars)]
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


def _browser_executor():
    """The browser's cell executor (theme/js/python/course_runtime.py), loaded from its file: the build runs
    cells with the very same notebook semantics the Pyodide worker uses."""
    import importlib.util

    module = sys.modules.get("course_runtime")
    if module is None:
        path = Path(__file__).resolve().parent.parent / "theme" / "js" / "python" / "course_runtime.py"
        spec = importlib.util.spec_from_file_location("course_runtime", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        sys.modules["course_runtime"] = module
    return module


def execute_cell(code: str, filename: str, namespace: dict) -> dict:
    """Run `code` in `namespace` like a notebook cell: the value of a trailing expression is the result."""
    sink = _Sink()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Capture(sink, "stdout"), _Capture(sink, "stderr")  # type: ignore[assignment]
    result: dict[str, Any] = {"repr": None, "error": None}
    started = time.perf_counter()
    try:
        result["repr"], repr_cut = _browser_executor().execute_notebook_cell(code, filename, namespace, MAX_REPR_CHARS)
        sink.truncated = sink.truncated or repr_cut
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, SystemExit included
        text, frames = _trimmed_traceback(exc)
        own = [line for name, line in frames if name == filename]
        if isinstance(exc, SyntaxError) and exc.filename == filename:
            line = exc.lineno or 1
        else:
            line = own[-1] if own else 1  # the innermost statement of *this* cell that was executing
        message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        result["error"] = {"type": type(exc).__name__, "message": message, "traceback": text, "line": line}
    finally:
        sys.stdout, sys.stderr = saved
    result.update(chunks=sink.chunks, truncated=sink.truncated, seconds=round(time.perf_counter() - started, 4))
    return result


def _child_main() -> None:
    """Protocol: one JSON request on stdin {root, prelude, cells: [{filename, code}]}; one JSON line per
    event on the original stdout: {"ready": true}, then one result per cell. User output never reaches it."""
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything written to fd 1 behind Python's back lands on stderr, not in the protocol
    request = json.loads(sys.stdin.read())
    sys.path.insert(0, request["root"])
    exec(compile(request["prelude"], "<prelude>", "exec"), {})  # NumPy print options are process-global
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    proto.write(json.dumps({"ready": True}) + "\n")
    proto.flush()
    for cell in request["cells"]:
        result = execute_cell(cell["code"], cell["filename"], namespace)
        proto.write(json.dumps(result, ensure_ascii=False) + "\n")
        proto.flush()
        if result["error"] and not cell.get("expect_error"):
            break


# ------------------------------------------------------------------------------- running a page's cells


class CellRunError(Exception):
    """The child process died, hung or could not start."""


def _cache_inputs(root: Path) -> str:
    """Everything besides the cell sources that can change an output."""
    pkg = root / "attention_core"
    h = hashlib.sha256()
    for p in sorted(pkg.rglob("*.py")) if pkg.is_dir() else []:
        h.update(p.relative_to(pkg).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    try:
        numpy_version = importlib.metadata.version("numpy")
    except importlib.metadata.PackageNotFoundError:
        numpy_version = "none"
    executor = root / "theme" / "js" / "python" / "course_runtime.py"
    executor_hash = hashlib.sha256(executor.read_bytes()).hexdigest() if executor.exists() else "none"
    return json.dumps([EXECUTOR_VERSION, sys.version_info[:2], numpy_version, h.hexdigest(), PRELUDE, executor_hash])


def cache_keys(cells: list[Cell], root: Path) -> list[str]:
    """Key of cell k = hash of the environment and every cell (id + source) up to and including k."""
    h = hashlib.sha256(_cache_inputs(root).encode())
    keys = []
    for cell in cells:
        h.update(json.dumps([cell.id, cell.code, cell.expect_error]).encode() + b"\0")
        keys.append(h.copy().hexdigest())
    return keys


def run_cells_in_child(cells: list[Cell], root: Path, timeout: float | None = None) -> list[dict]:
    """Execute the cells in order in a fresh Python; returns one result per cell that ran.

    Stops after the first unexpected error. Raises CellRunError(index, message) if a cell exceeds
    `timeout` seconds or the process dies.
    """
    timeout = CELL_TIMEOUT_S if timeout is None else timeout
    request = {"root": str(root), "prelude": PRELUDE,
               "cells": [{"filename": c.filename, "code": c.code, "expect_error": c.expect_error} for c in cells]}
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen([sys.executable, "-c", "from builder.cells import _child_main; _child_main()"],
                            cwd=str(ROOT), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True, encoding="utf-8")
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
    threading.Thread(target=pump_stderr, daemon=True).start()
    results: list[dict] = []
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(request))
        proc.stdin.close()
        waits = [STARTUP_TIMEOUT_S] + [timeout] * len(cells)
        for step, limit in enumerate(waits):
            running = max(step - 1, 0)  # index of the cell the child is busy with
            try:
                line = lines.get(timeout=limit)
            except queue.Empty:
                what = "did not finish" if step else "could not start Python"
                raise CellRunError(running, f"{what} within {limit:g} s (infinite loop?); the build stopped it") from None
            if line is None:
                proc.wait(timeout=5)
                tail = "".join(stderr_text).strip()
                raise CellRunError(running, f"crashed the Python process (exit code {proc.returncode})"
                                   + (f":\n{tail}" if tail else ""))
            if step == 0:
                continue
            results.append(json.loads(line))
            if results[-1]["error"] and not cells[step - 1].expect_error:
                break  # the child stops after an unexpected error, too
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    return results


def execute_page(cells: list[Cell], env: dict, cache_dir: Path | None, root: Path) -> None:
    """Fill `cell.output` for every cell (from the cache when possible); report failures as path:line."""
    if not cells:
        return
    keys = cache_keys(cells, root)
    store = cache_dir / "cells" if cache_dir else None
    cached: list[CellOutput | None] = []
    for key in keys:
        path = store / f"{key}.json" if store else None
        try:
            cached.append(CellOutput.from_json(json.loads(path.read_text("utf-8"))) if path else None)
        except (OSError, ValueError):
            cached.append(None)
    if all(c is not None for c in cached):
        for cell, out in zip(cells, cached):
            cell.output = out
        return

    try:
        results = run_cells_in_child(cells, root)
    except CellRunError as exc:
        index, message = exc.args
        cell = cells[index]
        report(env, Code.CELL, cell.token, f"code cell '{cell.id}' {message}")  # where it hung is unknown
        return
    for cell, key, result in zip(cells, keys, results):
        cell.output = CellOutput(chunks=[(s, t) for s, t in result["chunks"]], repr=result["repr"],
                                 error=result["error"], truncated=result["truncated"], seconds=result["seconds"])
        error = result["error"]
        if error and not cell.expect_error:
            tb = "\n".join("    " + line for line in error["traceback"].rstrip("\n").split("\n"))
            report(env, Code.CELL, cell.token,
                   f"code cell '{cell.id}' raised {error['type']}: {error['message']}\n{tb}",
                   offset=cell.code_offset + error["line"] - 1)
            return
        if cell.expect_error and not error:
            report(env, Code.CELL, cell.token, f"code cell '{cell.id}' is marked :expect-error: but did not raise")
            return
        if store:
            store.mkdir(parents=True, exist_ok=True)
            tmp = store / f"{key}.json.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(cell.output.to_json(), ensure_ascii=False), "utf-8")
            os.replace(tmp, store / f"{key}.json")


# ------------------------------------------------------------------------------------------- rendering

# The Pygments classes theme/css/base.css colours (.hl-k, .hl-s2, …). A token of any other type (names,
# punctuation, whitespace: most of the tokens) gets no <span>: it would be unstyled markup, ~40 % of the
# static code's bytes. tests/unit/test_cells.py checks this set against base.css.
STYLED_CLASSES = frozenset({
    "k", "kn", "kc", "kd", "kr", "ow",              # keywords
    "s", "s1", "s2", "sd", "sa", "si", "se",        # strings
    "m", "mi", "mf", "mh",                          # numbers
    "c", "c1", "cm", "ch",                          # comments
    "nf", "nb", "bp", "fm",                         # functions, builtins
    "o",                                            # operators
})
_CELL_FORMATTER = HtmlFormatter(nowrap=True, classprefix="hl-")


def _css_class(ttype: Any) -> str:
    while ttype not in STANDARD_TYPES:  # a token subtype Pygments has no class for uses its parent's
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


def highlight_cell_source(code: str) -> str:
    """The cell's Python as HTML: spans (hl- classes) only on the tokens the theme colours, the rest as
    escaped text (consecutive plain tokens merge into one text run)."""
    tokens = PythonLexer(stripnl=False, ensurenl=False).get_tokens(code)
    plain = ((ttype if _css_class(ttype) in STYLED_CLASSES else PygmentsToken.Text, value) for ttype, value in tokens)
    return pygments_format(plain, _CELL_FORMATTER)



def _output_html(out: CellOutput | None) -> str:
    """The build-time output, as escaped text in the same structure cells.js produces after a run."""
    parts: list[str] = []
    if out is not None:
        for stream, text in out.chunks:
            parts.append(f'<span class="cell-{stream}">{escapeHtml(text)}</span>')
        if out.error:
            parts.append(f'<span class="cell-error">{escapeHtml(out.error["traceback"])}</span>')
        if out.repr is not None:
            parts.append(f'<span class="cell-result">{escapeHtml(out.repr)}</span>')
        if out.truncated:
            parts.append('<span class="cell-truncated">输出过长，已截断</span>')
    body = "".join(parts)
    return (f'<div class="cell-output" data-origin="build"{"" if body else " data-empty"}>'
            f'<div class="cell-output-head"><span class="cell-output-label">构建时输出</span>'
            f'<span class="cell-status" role="status" aria-live="polite"></span></div>'
            f'<pre class="cell-log" role="log" aria-live="polite" aria-label="输出" tabindex="0">{body}</pre>'
            f'</div>')


def render_cell(cell: Cell, first: bool) -> str:
    """One cell: a toolbar, the highlighted source (the editor replaces it), the build-time output."""
    code_html = highlight_cell_source(cell.code)
    n_lines = cell.code.count("\n")
    attrs = [f'id="{escapeHtml(cell.element_id)}"', f'data-cell-id="{escapeHtml(cell.id)}"',
             f'data-source-hash="{cell.source_hash}"', f'style="--cell-lines: {n_lines}"']
    attrs += [a for a, on in (("data-hide", cell.hide), ("data-readonly", cell.readonly),
                              ("data-expect-error", cell.expect_error)) if on]
    label = "准备代码" if cell.hide else "代码单元"
    toolbar = (
        '<div class="cell-toolbar" role="group" aria-label="代码单元操作">'
        f'<span class="cell-name" aria-hidden="true">{label} · <code>{escapeHtml(cell.id)}</code></span>'
        '<span class="cell-modified" hidden>已修改</span>'
        '<button type="button" class="cell-btn cell-run" data-action="run" disabled '
        'title="运行（Ctrl/⌘ + Enter）" aria-keyshortcuts="Control+Enter Meta+Enter">▶ 运行</button>'
        '<button type="button" class="cell-btn cell-stop" data-action="stop" disabled hidden>■ 停止</button>'
        f'<button type="button" class="cell-btn cell-reset" data-action="reset" disabled title="恢复作者的原始代码">↺ 重置</button>'
        '</div>'
    )
    # Focusable (tabindex): the reader can scroll it with the keyboard and run it with Ctrl/⌘+Enter before
    # the editor has loaded; cells.js adds the key handling and later swaps this <pre> for CodeMirror.
    source = (f'<div class="cell-editor"><pre class="cell-source" tabindex="0" '
              f'aria-label="Python 代码（单元 {escapeHtml(cell.id)}）"><code class="language-python">'
              f'{code_html}</code></pre></div>')
    notice = '<div class="cell-notice" role="status" hidden></div>'
    inner = toolbar + notice + source + _output_html(cell.output)
    if cell.hide:
        inner = (f'<details class="cell-setup"><summary>准备代码（已折叠；运行下方单元前会自动执行）</summary>'
                 f'{inner}</details>')
    html = f'<section class="code-cell" {" ".join(attrs)} aria-label="{label} {escapeHtml(cell.id)}">{inner}</section>\n'
    if first:
        bar = ('<div class="cells-bar" role="group" aria-label="本页代码">'
               f'<button type="button" class="cell-btn cells-run-all" data-action="run-all" disabled>▶▶ 全部运行</button>'
               '<span class="cells-bar-status" role="status" aria-live="polite">本页代码已在构建时运行，下方显示的是构建时输出；'
               '点击“运行”即可在浏览器中重新执行（首次需加载 Python 运行环境）。</span>'
               f'<script type="text/plain" class="cells-prelude">{escapeHtml(PRELUDE)}</script>'
               '</div>\n')
        html = bar + html
    return html


# ------------------------------------------------------------------------------------------ the plugin


def markdown_plugin(md: MarkdownIt) -> None:
    """Register ```{code-cell}: parse + execute at the end of parsing a page, render afterwards."""

    def collect_and_execute(state: Any) -> None:
        env = state.env
        if "problems" not in env:
            return
        cells: list[Cell] = []
        seen: set[str] = set()
        valid = True
        for token in state.tokens:
            if token.type != "code-cell":
                continue
            cell = parse_cell(token, env, len(cells) + 1, seen)
            token.meta = {**(token.meta or {}), "cell": cell, "first_cell": not cells}
            if cell is None:
                valid = False
                cells.append(None)  # type: ignore[arg-type]
                continue
            cells.append(cell)
        if not cells:
            return
        env.setdefault("features", set()).add("cells")
        env.setdefault("extra_ids", set()).update(c.element_id for c in cells if c is not None)
        if not valid:
            return  # option errors are reported; executing a partial page would only add noise
        options = md.options.get("build_options")
        cache_dir = getattr(options, "cache_dir", None)
        root = getattr(options, "root", ROOT)
        execute_page(cells, env, cache_dir, root)

    md.core.ruler.push("code_cells", collect_and_execute)

    def render(token: Token, env: dict) -> str:
        cell = (token.meta or {}).get("cell")
        if cell is None:
            return ""
        if cell.element_id in env.get("heading_ids", set()):
            report(env, Code.CELL, token, f"code cell element id '{cell.element_id}' is also a heading id on this page")
        return render_cell(cell, bool(token.meta.get("first_cell")))

    register_directive(md, "code-cell", render)


__all__ = ["markdown_plugin", "PRELUDE", "execute_cell", "run_cells_in_child", "cache_keys", "CELL_TIMEOUT_S"]

if __name__ == "__main__":
    _child_main()
