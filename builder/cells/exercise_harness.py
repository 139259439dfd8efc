"""The Python that runs an exercise in the page's worker and in the build: the same text both places (the browser's
copy is theme/js/cells/exercise.js `harnessCode` / `defineCode`), so a verdict — and the names a passing exercise
hands to the page — are the same in both. Here, below both stages that use it: the cells stage runs `define_code`
where an exercise with `:defines:` stands, the exercises stage runs `harness_code` to verify each exercise."""

from __future__ import annotations

import json

from ..model import Exercise


def imports_of(*sources: str) -> list[str]:
    """Top-level module names these sources import (the worker loads those packages before a check runs): the
    cells' own rule (cell_runtime.imports_of), over every source."""
    from .executor import _browser_executor

    read = _browser_executor().imports_of
    return sorted({name for source in sources for name in read(source)})


def harness_code(
    exercise_id: str,
    code: str,
    checks: str,
    hidden: str,
    imports: list[str],
    defines: tuple[str, ...] = (),
    uses: tuple[str, ...] = (),
) -> str:
    """The Python a check runs — the same in the browser (theme/js/cells/exercise.js writes it alike): the imports
    named under `if False:` (so the runtime loads their packages, as it does for a cell's imports, without running
    them), then the checker on the exercise as JSON, with the namespace it runs in (the page's, in the browser:
    a passing exercise hands its `defines` there); the trailing call's repr is the verdict's JSON."""
    fields = {"id": exercise_id, "code": code, "checks": checks, "hidden": hidden}
    if defines:
        fields["defines"] = list(defines)
    if uses:
        fields["uses"] = list(uses)
    payload = json.dumps(fields)
    head = "if False:\n" + "".join(f"    import {name}\n" for name in imports) if imports else ""
    return f'{head}__import__("exercise_runtime").check({json.dumps(payload)}, globals())\n'


def define_code(exercise: Exercise) -> str:
    """The Python that hands an exercise's `defines` to the page's namespace from its reference solution: what
    the build runs where the exercise stands, so the cells below it see the names (the browser runs the same with
    the learner's passing code: exercise.js `defineCode`)."""
    imports = imports_of(exercise.solution)
    fields = {"id": exercise.id, "code": exercise.solution, "defines": list(exercise.defines)}
    payload = json.dumps({**fields, "uses": list(exercise.uses)} if exercise.uses else fields)
    head = "if False:\n" + "".join(f"    import {name}\n" for name in imports) if imports else ""
    return f'{head}__import__("exercise_runtime").define({json.dumps(payload)}, globals())\n'
