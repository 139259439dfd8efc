"""Exercise checker that runs inside the Pyodide worker, and in the build's Pyodide (builder/exercises/verify.py),
so a verdict is the same in both. Importable in CPython too (tests).

`check(payload)` (payload: JSON text {id, code, checks, hidden}) runs the learner's code in a fresh namespace of
its own (never the page's cells' namespace), then the public checks and the hidden checks: each is a function
`def check_…():` whose docstring's first line is its label, run in a namespace that sees the learner's names and
the helpers below. It returns a `Verdict`, whose repr is its JSON (the worker hands a run's trailing repr to the
page; the build reads the same text), so nothing but the repr crosses from Python.

A failure is said for a learner, never as the checker's traceback: the helpers (`expect_close`, `expect_equal`,
`expect_shape`, `expect_true`) raise `CheckFailed` with the expected and the received value, their shapes and the
first element that differs; an exception inside the learner's code names its line in their code (frames of the
learner's code only); a name the checks need and the code does not define is said as such. A helper that passes
leaves a note (the shape and the first numbers it compared), so a passing check shows numbers too.
KeyboardInterrupt (Stop) is not caught.

An exercise that `defines` names (its `:defines:` option) hands them to the page: when the learner's code passes
every check, those names join the page's cells' namespace (`page`: the harness passes `globals()`, which is that
namespace, since the harness runs as a cell), so the cells below use what the learner wrote — a notebook whose
pieces were checked before they were used. `define(payload, page)` does the same for code that passed on an
earlier visit (the page keeps it), without the checks; the build runs it with the reference solution. An exercise's
code sees the names the exercises above it hand to the page (`uses`): a piece can be built on the learner's own
earlier pieces.
"""

from __future__ import annotations

import builtins
import json
import linecache
import sys
import time
import traceback

CODE_FILE = "<cell-exercise-{id}>"  # "<cell-" as in cell_runtime: the frames a cell's traceback keeps
CHECK_FILES = {"checks": "<exercise-checks>", "hidden": "<exercise-hidden>"}
CHECK_PREFIX = "check_"
MAX_NOTE = 160


def stoppable(code):
    """The learner's and the checks' code objects pass through here: in the browser's worker, where Stop ends the
    worker, it is cell_runtime.make_stoppable (so their loops can be ended there too); elsewhere, as they are."""
    return code


class CheckFailed(AssertionError):
    """A check's verdict, said for a learner (raised by the expect_… helpers)."""


class Verdict(dict):
    """The result of one check run; its repr is JSON (what the page and the build read)."""

    def __repr__(self) -> str:
        return json.dumps(self, ensure_ascii=False, sort_keys=True)


_notes: list[str] = []


def _np():
    import numpy

    return numpy


def _shape_text(shape: tuple) -> str:
    return "标量" if shape == () else "(" + ", ".join(str(n) for n in shape) + (",)" if len(shape) == 1 else ")")


def _num(value) -> str:
    if isinstance(value, bool) or type(value).__name__ in ("bool", "bool_"):  # NumPy 2's np.bool is named "bool"
        return str(bool(value))
    try:
        v = float(value)
    except (TypeError, ValueError):
        return repr(value)
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.4g}"


def _preview(arr) -> str:
    np = _np()
    flat = np.asarray(arr).ravel()
    shown = ", ".join(_num(v) for v in flat[:6]) + (", …" if flat.size > 6 else "")
    return f"[{shown}]" if np.ndim(arr) else shown


def _kind(value) -> str:
    np = _np()
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"形状为 {_shape_text(value.shape)} 的数组"
    return type(value).__name__


def _note(text: str) -> None:
    _notes.append(text if len(text) <= MAX_NOTE else text[: MAX_NOTE - 1] + "…")


def _as_numbers(got, what: str):
    np = _np()
    if got is None:
        raise CheckFailed(f"{what} 是 None：你的函数是不是忘了 return？")
    try:
        arr = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise CheckFailed(f"{what} 应该是数字或数组，得到的是 {_kind(got)}") from None
    return arr


def expect_shape(got, shape, what: str = "结果") -> None:
    """`got` has this shape (a tuple)."""
    np = _np()
    if got is None:
        raise CheckFailed(f"{what} 是 None：你的函数是不是忘了 return？")
    actual = tuple(np.shape(got))
    shape = tuple(shape)
    if actual != shape:
        raise CheckFailed(f"{what} 的形状不对：期望 {_shape_text(shape)}，得到 {_shape_text(actual)}")
    _note(f"{what}：形状 {_shape_text(actual)} ✓")


def _first_difference(bad, expected, got, what: str, extra: str = "") -> None:
    np = _np()
    where = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    at = "" if where == () else f"第一个不同的元素在 [{', '.join(map(str, where))}]："
    count = f"；{int(bad.sum())} / {bad.size} 个元素不同" if bad.size > 1 else ""
    raise CheckFailed(
        f"{what} 的数值不对：{at}期望 {_num(expected[where])}，得到 {_num(got[where])}{count}{extra}"
        f"\n  期望：{_preview(expected)}\n  得到：{_preview(got)}"
    )


def expect_close(got, expected, what: str = "结果", rtol: float = 1e-5, atol: float = 1e-8) -> None:
    """`got` equals `expected` to within the tolerance (numbers or arrays of the same shape)."""
    np = _np()
    exp = np.asarray(expected, dtype=float)
    arr = _as_numbers(got, what)
    if arr.shape != exp.shape:
        raise CheckFailed(f"{what} 的形状不对：期望 {_shape_text(exp.shape)}，得到 {_shape_text(arr.shape)}")
    bad = ~np.isclose(arr, exp, rtol=rtol, atol=atol, equal_nan=True)
    if bad.any():
        worst = np.nanmax(np.abs(arr - exp)) if np.isfinite(arr).all() else float("nan")
        _first_difference(bad, exp, arr, what, f"，最大差 {_num(worst)}" if worst == worst else "")
    _note(f"{what}：形状 {_shape_text(arr.shape)}，{_preview(arr)} ✓")


def expect_equal(got, expected, what: str = "结果") -> None:
    """`got` equals `expected` exactly (arrays: same shape, every element equal; anything else: ==)."""
    np = _np()
    if isinstance(expected, np.ndarray) or isinstance(got, np.ndarray):
        exp = np.asarray(expected)
        if got is None:
            raise CheckFailed(f"{what} 是 None：你的函数是不是忘了 return？")
        arr = np.asarray(got)
        if arr.shape != exp.shape:
            raise CheckFailed(f"{what} 的形状不对：期望 {_shape_text(exp.shape)}，得到 {_shape_text(arr.shape)}")
        bad = arr != exp
        if np.any(bad):
            _first_difference(np.asarray(bad), exp, arr, what)
        _note(f"{what}：形状 {_shape_text(arr.shape)}，{_preview(arr)} ✓")
        return
    if got != expected:
        extra = "（你的函数是不是忘了 return？）" if got is None else ""
        raise CheckFailed(f"{what} 不对：期望 {expected!r}，得到 {got!r}{extra}")
    _note(f"{what}：{got!r} ✓")


def expect_true(condition, message: str) -> None:
    """`condition` holds; otherwise `message` is the learner's message."""
    if not condition:
        raise CheckFailed(message)


HELPERS = {
    "CheckFailed": CheckFailed,
    "expect_close": expect_close,
    "expect_equal": expect_equal,
    "expect_shape": expect_shape,
    "expect_true": expect_true,
}


def _remember(filename: str, source: str) -> None:
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def _code_error(exc: BaseException, filename: str) -> dict:
    """An exception of the learner's code: its line there and a traceback of the learner's frames only."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        line = exc.lineno or 1
        text = "".join(traceback.format_exception_only(type(exc), exc))
        message = exc.msg
    else:
        line = frames[-1].lineno if frames else None
        text = "".join(
            (["Traceback (most recent call last):\n"] if frames else [])
            + traceback.StackSummary.from_list(frames).format()
            + traceback.format_exception_only(type(exc), exc)
        )
        message = str(exc)
    return {"type": type(exc).__name__, "message": message, "line": line, "traceback": text}


def _check_error(exc: BaseException, code_file: str, check_file: str, hidden: bool) -> tuple[str, int | None, str]:
    """(message for the learner, line of the learner's code or None, learner traceback or "") of a check that
    raised something other than CheckFailed."""
    tb = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in tb if f.filename == code_file]
    if mine:
        err = _code_error(exc, code_file)
        said = f"检查调用你的代码时，第 {err['line']} 行出错：{err['type']}: {err['message']}"
        return said, err["line"], err["traceback"]
    if isinstance(exc, NameError) and tb and tb[-1].filename == check_file:
        name = getattr(exc, "name", None) or str(exc)
        return f"检查要用到 `{name}`，但你的代码没有定义它（名字拼对了吗？）。", None, ""
    if isinstance(exc, AssertionError):
        said = str(exc)
        if said:
            return said, None, ""
        frame = next((f for f in reversed(tb) if f.filename == check_file), None)
        if frame is not None and frame.line and not hidden:
            return f"条件不成立：{frame.line.strip()}", None, ""
        return "条件不成立。", None, ""
    return f"检查在使用你的结果时出错：{type(exc).__name__}: {exc}（返回值的类型或形状对吗？）", None, ""


def _run_checks(part: str, source: str, learner: dict, code_file: str) -> tuple[list[dict], dict | None]:
    """Run one part's check functions → ([result per check], error of the part's own top level or None)."""
    filename = CHECK_FILES[part]
    hidden = part == "hidden"
    if not source.strip():
        return [], None
    _remember(filename, source)
    space = {**learner, **HELPERS, "__name__": "exercise_checks", "__builtins__": builtins}
    space.setdefault("np", _np())
    before = set(space)
    try:
        exec(stoppable(compile(source, filename, "exec")), space)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the checks' own top level failed
        message, _, _ = _check_error(exc, code_file, filename, hidden)
        line = next((f.lineno for f in reversed(traceback.extract_tb(exc.__traceback__)) if f.filename == filename), 1)
        if isinstance(exc, SyntaxError) and exc.filename == filename:
            line = exc.lineno or 1
        return [], {"part": part, "type": type(exc).__name__, "message": message, "line": line}
    results = []
    checks = [
        (name, fn)
        for name, fn in space.items()
        if name.startswith(CHECK_PREFIX)
        and callable(fn)
        and (name not in before or fn is not learner.get(name))
        and getattr(getattr(fn, "__code__", None), "co_filename", "") == filename
    ]
    checks.sort(key=lambda item: item[1].__code__.co_firstlineno)
    for name, fn in checks:
        doc = (fn.__doc__ or "").strip().splitlines()
        result = {
            "name": name,
            "label": doc[0].strip() if doc else name,
            "hidden": hidden,
            "line": fn.__code__.co_firstlineno,
            "passed": False,
            "message": "",
            "notes": [],
            "traceback": "",
            "code_line": None,
        }
        _notes.clear()
        try:
            fn()
            result["passed"] = True
        except KeyboardInterrupt:
            raise
        except CheckFailed as exc:
            result["message"] = str(exc)
        except BaseException as exc:  # noqa: BLE001 - the learner's code may raise anything
            result["message"], result["code_line"], result["traceback"] = _check_error(exc, code_file, filename, hidden)
        result["notes"] = list(_notes)
        _notes.clear()
        results.append(result)
    return results, None


def check(payload: str, page: dict | None = None) -> Verdict:
    """Run the learner's code, then the checks → a Verdict (see the module's docstring)."""
    started = time.perf_counter()
    data = json.loads(payload)
    code_file, code, learner = _learners_code(data, page)
    verdict = Verdict(ok=False, error=None, checks=[], passed=0, total=0)
    try:
        exec(stoppable(compile(code, code_file, "exec")), learner)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the learner's code may raise anything, SystemExit included
        verdict["error"] = {"part": "code", **_code_error(exc, code_file)}
        verdict["seconds"] = round(time.perf_counter() - started, 4)
        return verdict
    for part in ("checks", "hidden"):
        results, error = _run_checks(part, data.get(part, ""), learner, code_file)
        verdict["checks"].extend(results)
        if error is not None:
            verdict["error"] = error
            break
    verdict["passed"] = sum(1 for r in verdict["checks"] if r["passed"])
    verdict["total"] = len(verdict["checks"])
    verdict["ok"] = verdict["error"] is None and verdict["total"] > 0 and verdict["passed"] == verdict["total"]
    if verdict["ok"] and data.get("defines"):
        verdict["defined"] = _hand_to_page(learner, data["defines"], page)
    verdict["seconds"] = round(time.perf_counter() - started, 4)
    return verdict


def _learners_code(data: dict, page: dict | None) -> tuple[str, str, dict]:
    """(file name, code, a fresh namespace that holds the names of the exercises above it uses)."""
    code_file = CODE_FILE.format(id=data.get("id", "x"))
    code = data.get("code", "")
    _remember(code_file, code)
    learner = {"__name__": "__main__", "__builtins__": builtins, "__doc__": None}
    learner.update(_from_page(data.get("uses", []), page))
    return code_file, code, learner


def _from_page(names: list[str], page: dict | None) -> dict:
    """The names of exercises above that the page's namespace holds (the learner's passing code, or at build time
    the reference solutions)."""
    if page is None:
        cells = sys.modules.get("cell_runtime")
        page = cells.namespace if cells is not None else {}
    return {name: page[name] for name in names if name in page}


def _hand_to_page(space: dict, names: list[str], page: dict | None) -> list[str]:
    """Copy `names` from the learner's namespace into the page's cells' namespace → the names copied. (A function
    keeps its own globals, the learner's namespace, so what it imported there still works in the page.)"""
    if page is None:
        cells = sys.modules.get("cell_runtime")
        if cells is None:
            return []
        page = cells.namespace
    done = [name for name in names if name in space]
    for name in done:
        page[name] = space[name]
    return done


def define(payload: str, page: dict | None = None) -> Verdict:
    """Run code that passed this exercise before (payload: JSON {id, code, defines, uses}) and hand its `defines`
    to the page, without the checks → Verdict {ok, defined, error}."""
    data = json.loads(payload)
    code_file, code, learner = _learners_code(data, page)
    try:
        exec(stoppable(compile(code, code_file, "exec")), learner)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - stored code may raise anything
        return Verdict(ok=False, defined=[], error={"part": "code", **_code_error(exc, code_file)})
    defined = _hand_to_page(learner, list(data.get("defines", [])), page)
    return Verdict(ok=len(defined) == len(data.get("defines", [])), defined=defined, error=None)
