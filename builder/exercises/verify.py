"""Stage: verify exercises — every exercise's reference solution must pass all its checks (public and hidden) and its
starter code must fail at least one (a check that cannot fail is an error), else a build error at `path:line` (the
check, the solution's line that raised, or the starter). They run where the code cells run (builder/cells/:
Pyodide under Node with the reader's runtime, or a CPython child without Node), through the very checker the
browser runs (builder/runtime/browser/exercise_runtime.py), all of a batch's exercises in one process, two runs
each. A verdict is cached by content: the cells' environment, the checker and the exercise's four parts.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import cache as cachestore
from ..cells import CellEnvironment
from ..cells.executor import EXERCISE_RUNTIME, CellRunError, run_cells_in_child, run_cells_in_pyodide
from ..cells.exercise_harness import define_code, harness_code, imports_of
from ..errors import Code
from ..model import Exercise, ParseContext


def _key(exercise: Exercise, env_key: str, above: list[Exercise]) -> str:
    return cachestore.digest(
        "exercise",
        env_key,
        cachestore.file_digest(EXERCISE_RUNTIME),
        json.dumps([exercise.id, exercise.starter, exercise.checks, exercise.hidden, exercise.solution]),
        *(define_code(e) for e in above),
    )


def _above(context: ParseContext, exercise: Exercise) -> list[Exercise]:
    """The exercises above this one that hand it names it uses (their reference solutions define them)."""
    if not exercise.uses:
        return []
    before = context.exercises[: context.exercises.index(exercise)]
    return [e for e in before if set(e.defines) & set(exercise.uses)]


def _requests(exercise: Exercise, above: list[Exercise]) -> list[dict]:
    """The runs of one exercise: the reference solutions of the exercises above it whose names it uses (into the
    namespace its checks then run in, as the page's would hold them), then its solution and its starter."""
    imports = imports_of(exercise.starter, exercise.checks, exercise.hidden, exercise.solution)
    defines = [{"filename": f"<exercise-define-{e.id}>", "code": define_code(e), "expect_error": True} for e in above]
    return defines + [
        {
            "filename": f"<exercise-{part}-{exercise.id}>",
            "code": harness_code(
                exercise.id,
                getattr(exercise, part),
                exercise.checks,
                exercise.hidden,
                imports,
                exercise.defines,
                exercise.uses,
            ),
            "expect_error": True,  # the checker catches what the code raises: a run that raises goes on
        }
        for part in ("solution", "starter")
    ]


def _run(requests: list[dict], env: CellEnvironment) -> list[dict | str]:
    """One result per request: the cell result, or the message of a run that hung or crashed (the runs after it go
    on in a fresh process)."""
    results: list[dict | str] = []
    while len(results) < len(requests):
        todo = requests[len(results) :]
        try:
            if env.runtime is not None:
                results.extend(run_cells_in_pyodide(todo, env.runtime))
            else:
                results.extend(run_cells_in_child(todo, [*env.packages, EXERCISE_RUNTIME]))
        except CellRunError as exc:
            index, message = exc.args
            results.extend([{"retry": True}] * index)  # lost with the process: run again, never guessed
            results.append(str(message))
    return results


def verify_exercises_of_pages(
    contexts: list[ParseContext], cache_dir: Path | None, env: CellEnvironment | None
) -> None:
    """Check every well-formed exercise of these pages (from the cache when possible); problems at path:line."""
    todo = [(c, ex) for c in contexts for ex in c.exercises]
    if not todo or env is None:
        return
    env_key = env.key()
    above = [_above(c, ex) for c, ex in todo]
    keys = [_key(ex, env_key, above[i]) for i, (_, ex) in enumerate(todo)]
    with cachestore.open_cache(cache_dir) as store:
        found = store.get_many(keys)
    misses = [i for i, k in enumerate(keys) if k not in found]
    verdicts: dict[int, tuple[dict | str, dict | str]] = {}
    for _attempt in range(2):
        pending = [i for i in misses if i not in verdicts]
        if not pending:
            break
        per = [_requests(todo[i][1], above[i]) for i in pending]
        results = _run([r for rs in per for r in rs], env)
        at = 0
        for i, rs in zip(pending, per):
            at += len(rs)
            pair = (results[at - 2], results[at - 1])  # its solution's and its starter's (the definitions come first)
            if not any(isinstance(r, dict) and r.get("retry") for r in pair):
                verdicts[i] = pair
    fresh: dict[str, object] = {}
    for i, (context, exercise) in enumerate(todo):
        if keys[i] in found:
            pair = found[keys[i]]
        elif i in verdicts:
            pair = tuple(_verdict(r) for r in verdicts[i])
            if all(isinstance(v, dict) for v in pair):
                fresh[keys[i]] = pair
        else:
            pair = ("did not run (the process running the exercises failed twice)",) * 2
        _report(context, exercise, *pair)
    if fresh:
        with cachestore.open_cache(cache_dir) as store:
            store.put_many(fresh)


def _verdict(result: dict | str) -> dict | str:
    """A run's verdict (the checker's JSON), or what went wrong as a message."""
    if isinstance(result, str):
        return result
    if result.get("error"):
        error = result["error"]
        return f"the checker itself failed: {error['type']}: {error['message']}"
    try:
        return json.loads(result["repr"])
    except (TypeError, ValueError):
        return f"the checker returned no verdict (got {str(result.get('repr'))[:80]!r})"


def _line(exercise: Exercise, part: str, line: int | None) -> int:
    """Lines from the fence line to line `line` (1-based) of a part."""
    return exercise.lines.get(part, 0) + max((line or 1) - 1, 0)


def _add(context: ParseContext, exercise: Exercise, offset: int, message: str) -> None:
    fence = exercise.token.map[0] if exercise.token.map else 0
    context.problems.add(Code.EXERCISE, context.rel, context.line_offset + fence + 1 + offset, message)


def _report(context: ParseContext, exercise: Exercise, solution: dict | str, starter: dict | str) -> None:
    name = f"exercise '{exercise.id}'"
    if isinstance(solution, str):
        _add(context, exercise, _line(exercise, "solution", 1), f"{name}: the reference solution {solution}")
    elif solution["error"]:
        error = solution["error"]
        part = error["part"]
        if part == "code":
            _add(
                context,
                exercise,
                _line(exercise, "solution", error.get("line")),
                f"{name}: the reference solution raised {error['type']}: {error['message']}",
            )
        else:
            _add(
                context,
                exercise,
                _line(exercise, part, error.get("line")),
                f"{name}: the '--- {part}' part cannot run with the reference solution: {error['message']}",
            )
    else:
        if not solution["checks"]:
            _add(context, exercise, _line(exercise, "checks", 1), f"{name}: no check ran")
        for check in solution["checks"]:
            if check["passed"]:
                continue
            part = "hidden" if check["hidden"] else "checks"
            where = f" (line {check['code_line']} of the solution)" if check.get("code_line") else ""
            _add(
                context,
                exercise,
                _line(exercise, part, check["line"]),
                f"{name}: the reference solution fails check '{check['name']}'{where}: {check['message']}",
            )
    if isinstance(starter, str):
        _add(context, exercise, _line(exercise, "starter", 1), f"{name}: the starter code {starter}")
    elif starter["ok"]:
        _add(
            context,
            exercise,
            _line(exercise, "starter", 1),
            f"{name}: the starter code passes every check, so the checks cannot tell a solved exercise from an "
            "unsolved one: leave the starter unfinished, or add a check it fails",
        )
