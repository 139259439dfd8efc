"""Stage: run cells — every page's code cells executed at build time, in page order (builder/cells/executor.py),
their outputs cached by content: the key of a page's cells hashes the environment (the runtime's files, the
course's browser packages, NumPy's version, the executor, the prelude: by content, never by path) and every cell's
id and source, so a warm build executes nothing, wherever the project lies.

A cell that raises (unless marked :expect-error:), hangs or crashes the process is a build error at the line
of the cell that failed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import cache as cachestore
from .. import progress
from ..errors import Code
from ..model import Cell, CellOutput, Exercise, ParseContext
from ..source_text import visible_controls
from .executor import CELL_RUNTIME, PRELUDE, CellRunError, run_cells_in_child, run_cells_in_pyodide
from .exercise_harness import define_code

if TYPE_CHECKING:
    from ..runtime import Runtime


@dataclass(frozen=True)
class CellEnvironment:
    """What the cells run with: the course's browser packages (folders) and, when Node and Pyodide are there, the
    reader's own runtime (builder/runtime/); without it they run in a CPython child process."""

    packages: list[Path] = field(default_factory=list)
    runtime: Runtime | None = None

    def key(self) -> str:
        """Everything besides the cell sources that can change an output."""
        h = hashlib.sha256()
        for folder in self.packages:
            for p in sorted(folder.rglob("*.py")):
                h.update(p.relative_to(folder.parent).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
        try:
            numpy_version = importlib.metadata.version("numpy")
        except importlib.metadata.PackageNotFoundError:
            numpy_version = "none"
        code = [CELL_RUNTIME, Path(__file__).with_name("executor.py"), Path(__file__).with_name("pyodide_cells.cjs")]
        return cachestore.digest(
            json.dumps([sys.version_info[:2], numpy_version, h.hexdigest(), PRELUDE]),
            cachestore.tree_digest(code),
            runtime_digest(self.runtime) if self.runtime else "cpython",
        )


def runtime_digest(runtime: Runtime) -> str:
    """The runtime by its content, not by where its files lie (`Runtime.key` names its cache folders, and a folder's
    name may hold a path): the lock (every package's file name and sha256), what boots and preloads, and the bytes of
    the files the lock does not hash."""
    in_lock = {entry["file_name"] for entry in runtime.lock.get("packages", {}).values()}
    return cachestore.digest(
        runtime.lock_bytes(),
        json.dumps([runtime.boot, runtime.preload]),
        *(
            name.encode() + b"\0" + cachestore.file_digest(path)
            for name, path in sorted(runtime.files.items())
            if name not in in_lock
        ),
    )


def runnables(context: ParseContext) -> list[Cell | Exercise]:
    """What the build runs for a page, in page order: its cells (but those the reader alone runs, `:browser-only:`)
    and, where an exercise hands names to the page (`:defines:`), that exercise — its reference solution defines
    them there, as the learner's passing code does in the browser, so the cells below can use them."""
    items: list[Cell | Exercise] = [c for c in context.cells if c is not None and not c.browser_only]
    items += [e for e in context.exercises if e.defines]
    return sorted(items, key=_fence_line)


def _request(item: Cell | Exercise) -> dict:
    if isinstance(item, Exercise):
        return {"filename": f"<exercise-define-{item.id}>", "code": define_code(item), "expect_error": False}
    return {"filename": item.filename, "code": item.code, "expect_error": item.expect_error}


def cache_keys(items: list[Cell | Exercise], env: CellEnvironment) -> list[str]:
    """Key of item k = hash of the environment and every item (what it runs) up to and including k."""
    h = hashlib.sha256(env.key().encode())
    keys = []
    for item in items:
        r = _request(item)
        h.update(json.dumps([r["filename"], r["code"], r["expect_error"]]).encode() + b"\0")
        keys.append(h.copy().hexdigest())
    return keys


def run_page_cells(context: ParseContext, cache_dir: Path | None, env: CellEnvironment) -> None:
    """Fill `cell.output` for every cell of a page (from the cache when possible); report failures as path:line.
    Nothing runs when a cell of the page has bad options (already reported: running a partial page would only
    add noise)."""
    run_cells_of_pages([context], cache_dir, env, jobs=1)


def run_cells_of_pages(
    contexts: list[ParseContext], cache_dir: Path | None, env: CellEnvironment, *, jobs: int | None = None
) -> None:
    """`run_page_cells` for many pages: the pages the cache misses run side by side, up to `jobs` at a time (None:
    one per core) — each page in its own interpreter process (one namespace per page), so they share nothing."""
    todo = [c for c in contexts if runnables(c) and all(cell is not None for cell in c.cells)]
    if not todo:
        return
    keys = {id(c): cachestore.digest("cells", cache_keys(runnables(c), env)[-1]) for c in todo}  # each hashes all
    with cachestore.open_cache(cache_dir) as store:
        found = store.get_many(list(keys.values()))
    misses = [c for c in todo if keys[id(c)] not in found]
    ran = _execute_pages(misses, env, jobs) if misses else {}
    with cachestore.open_cache(cache_dir) as store:
        store.put_many({keys[i]: result for i, result in ran.items() if result[1] is None})  # failures run again
    for context in todo:
        _apply(context, found.get(keys[id(context)]) or ran[id(context)])


def _execute_pages(
    misses: list[ParseContext], env: CellEnvironment, jobs: int | None
) -> dict[int, tuple[list[CellOutput], tuple[int, str, int] | None]]:
    """Each page's cells run (`_execute`), the pages side by side, shown as one step of the build's progress."""
    workers = max(1, min(len(misses), jobs or os.cpu_count() or 1))
    where = "Pyodide" if env.runtime is not None else "CPython"
    pages = f"{len(misses)} page{'s' if len(misses) != 1 else ''}"
    total = sum(len(runnables(c)) for c in misses)
    with progress.step(f"running the code cells of {pages} in {where}", total=total, unit="cells") as step:

        def execute(context: ParseContext) -> tuple[list[CellOutput], tuple[int, str, int] | None]:
            items = runnables(context)
            result = _execute(items, env)
            step.advance(len(items))
            return result

        if workers > 1:  # the work is in child processes: threads only wait for them
            with ThreadPoolExecutor(max_workers=workers) as pool:
                return dict(zip((id(c) for c in misses), pool.map(execute, misses)))
        return {id(c): execute(c) for c in misses}


def _apply(context: ParseContext, result: tuple[list[CellOutput | None], tuple[int, str, int] | None]) -> None:
    outputs, failure = result
    items = runnables(context)
    for item, output in zip(items, outputs):
        if not isinstance(item, Cell) or output is None:
            continue
        # A copy: the cache hands every build of this process the same object, and the next build of the page
        # (another output folder) must find the figures' bytes in it again to write its own files.
        item.output = dataclasses.replace(
            output, chunks=[_figure_file(stream, text, context) for stream, text in output.chunks]
        )
        _show_controls(item, context)
    if failure is not None:
        index, message, offset = failure
        context.problems.add(
            Code.CELL, context.rel, context.line_offset + _fence_line(items[index]) + 1 + offset, message
        )


def _show_controls(cell: Cell, context: ParseContext) -> None:
    """Control characters a cell printed (NUL, ESC of a terminal colour, …) cannot be written into HTML: each is
    shown as its visible picture (␀, ␛, …), and the page gets a warning at the cell saying so."""
    output = cell.output
    if output is None:
        return
    names: dict[str, None] = {}

    def visible(text: str) -> str:
        shown, found = visible_controls(text)
        names.update(dict.fromkeys(found))
        return shown

    output.chunks = [(stream, text if stream == "display" else visible(text)) for stream, text in output.chunks]
    if output.repr is not None:
        output.repr = visible(output.repr)
    if output.error:
        output.error = {k: visible(v) if isinstance(v, str) else v for k, v in output.error.items()}
    if names:
        context.problems.warn(
            Code.CELL,
            context.rel,
            context.line_offset + _fence_line(cell) + 1,
            f"code cell '{cell.id}' printed control characters ({', '.join(names)}), which HTML cannot hold: the "
            "page shows each as its symbol (␀, ␛, …)",
        )


FIGURE_DIR = "assets/figures"


def _figure_file(stream: str, text: str, context: ParseContext) -> tuple[str, str]:
    """A stored figure becomes a site file (`assets/figures/<sha256>.png`, in the page's facts like a widget's
    data) that the page shows with a lazy <img>: a figure far down a page does not weigh on its first view."""
    if stream != "display":
        return stream, text
    d = json.loads(text)
    if d.get("kind") != "image/png" or "data" not in d:
        return stream, text
    import base64

    png = base64.b64decode(d.pop("data"))
    name = f"{FIGURE_DIR}/{hashlib.sha256(png).hexdigest()[:20]}.png"
    context.facts.files[name] = png
    d["src"] = name
    return stream, json.dumps(d, ensure_ascii=False, sort_keys=True)


def _fence_line(item: Cell | Exercise) -> int:
    return item.token.map[0] if item.token is not None and item.token.map else 0


def _execute(
    items: list[Cell | Exercise], env: CellEnvironment
) -> tuple[list[CellOutput | None], tuple[int, str, int] | None]:
    """Run the items: (outputs of those that ran — None for an exercise's definitions —, None or (index, message,
    line offset from the fence) of the first failure)."""
    request = [_request(item) for item in items]
    try:
        if env.runtime is not None:
            results = run_cells_in_pyodide(request, env.runtime)
        else:
            results = run_cells_in_child(request, env.packages)
    except CellRunError as exc:
        index, message = exc.args
        return [], (index, f"{_name(items[index])} {message}", 0)  # where it hung is unknown
    outputs: list[CellOutput | None] = []
    for index, (item, result) in enumerate(zip(items, results)):
        error = result["error"]
        if isinstance(item, Exercise):
            outputs.append(None)
            verdict = None if error else json.loads(result["repr"] or "null")
            if error or not verdict or not verdict.get("ok"):
                said = f"{error['type']}: {error['message']}" if error else json.dumps(verdict, ensure_ascii=False)
                return outputs, (
                    index,
                    f"{_name(item)}: its solution did not define {', '.join(item.defines)}: {said}",
                    0,
                )
            continue
        cell = item
        output = CellOutput(
            chunks=[(s, t) for s, t in result["chunks"]],
            repr=result["repr"],
            error=error,
            truncated=result["truncated"],
            seconds=result["seconds"],
        )
        outputs.append(output)
        if error and not cell.expect_error:
            tb = "\n".join("    " + line for line in error["traceback"].rstrip("\n").split("\n"))
            return outputs, (
                index,
                f"code cell '{cell.id}' raised {error['type']}: {error['message']}\n{tb}",
                cell.code_offset + error["line"] - 1,
            )
        if cell.expect_error and not error:
            return outputs, (index, f"code cell '{cell.id}' is marked :expect-error: but did not raise", 0)
    return outputs, None


def _name(item: Cell | Exercise) -> str:
    return f"exercise '{item.id}'" if isinstance(item, Exercise) else f"code cell '{item.id}'"
