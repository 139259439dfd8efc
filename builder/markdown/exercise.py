"""Exercises: ```{exercise} <title> with a `:id:` option line, the task in Markdown, then parts, each opened by a
line `--- <part>`:

    ```{exercise} 带温度的 softmax
    :id: softmax-temperature

    写出 `softmax(x, T)` ……（the task, Markdown）

    --- starter
    def softmax(x, T=1.0): ...
    --- checks
    def check_sums_to_one():
        \"\"\"每一行加起来等于 1\"\"\"
        expect_close(softmax(np.ones(3)).sum(), 1.0, "和")
    --- hidden
    (more check functions, not shown to the learner)
    --- solution
    (the reference solution)
    --- hint
    (Markdown; one to four hints, in the order they open)
    ```

At parse time (a core rule) every part is checked — the id, the parts present once each (hint: one to four),
Python that parses, at least one `def check_…` among the public checks — each problem as path:line; the task, the
title and the hints are parsed as Markdown with the page (their formulas reach the math stage, their links the link
checker). Well-formed exercises are collected into `ParseContext.exercises`: the build runs them (its own stage,
builder/exercises/verify.py) and the render rule hands each to the injected `render(block, env, md)`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..errors import Code
from ..model import Exercise, Link, ParseContext, parse_context
from .directive import parse_inline_at, register_directive, report, split_option_lines

PART_RE = re.compile(r"^---[ \t]+([A-Za-z-]+)[ \t]*$")
CODE_PARTS = ("starter", "checks", "hidden", "solution")
PARTS = (*CODE_PARTS, "hint")
REQUIRED = ("starter", "checks", "solution")
MAX_HINTS = 4
ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
CHECK_PREFIX = "check_"
OPTIONS = ("id", "defines")  # defines: names the learner's passing code hands to the page's cells


@dataclass
class ExerciseBlock:
    """A checked exercise with its Markdown parsed: what the renderer gets."""

    exercise: Exercise
    title: list[Token]
    task: list[Token]
    hints: list[list[Token]] = field(default_factory=list)


ExerciseRender = Callable[[ExerciseBlock, dict, MarkdownIt], str]


def parse_block_at(md: MarkdownIt, text: str, env: dict, line: int) -> list[Token]:
    """Block Markdown that belongs to a directive (an exercise's task, a hint), parsed with the page at its own
    0-based body line: its formulas, links and images reach the page's facts; what its plugins report names the
    right line. Render the tokens with `md.renderer.render(tokens, md.options, env)`."""
    context = parse_context(env)
    scratch = ParseContext(context.rel, context.line_offset + line, context.problems, context.planned_slugs)
    # No glossary tooltips in here: the page's prose is where a term is first explained, and a tooltip's id made in
    # this separate parse would repeat one of the page's (builder/markdown/glossary.py counts per parse).
    scratch.scratch["glossary_seen"] = _EveryTerm()
    tokens = md.parse(text, scratch.env())
    context.facts.formulas.extend((f, line + at) for f, at in scratch.facts.formulas)
    context.facts.links.extend(Link(link.href, line + link.line) for link in scratch.facts.links)
    context.facts.images.update(scratch.facts.images)
    context.facts.features.update(f for f in scratch.facts.features if f not in ("cells", "quiz", "exercise"))
    return tokens


class _EveryTerm(set):
    """A glossary's set of terms already used that holds every term."""

    def __contains__(self, item: object) -> bool:
        return True


def _split_parts(body: str) -> tuple[list[str], list[tuple[str, int, list[str]]]]:
    """(task lines, [(part name, index of its `---` line in `body`, its lines)])."""
    task: list[str] = []
    parts: list[tuple[str, int, list[str]]] = []
    for i, line in enumerate(body.split("\n")):
        m = PART_RE.match(line)
        if m:
            parts.append((m.group(1), i, []))
        elif parts:
            parts[-1][2].append(line)
        else:
            task.append(line)
    return task, parts


def _code(lines: list[str]) -> str:
    text = "\n".join(lines).strip("\n")
    return text + "\n" if text else ""


def _leading_blank(lines: list[str]) -> int:
    n = 0
    while n < len(lines) and not lines[n].strip():
        n += 1
    return n


def parse_exercise(md: MarkdownIt, token: Token, env: dict, seen: dict[str, int]) -> ExerciseBlock | None:
    """Check one exercise block; every problem as path:line. None when it cannot be used."""
    ok = True
    fence = token.map[0] if token.map else 0

    def problem(message: str, offset: int = 0) -> None:
        nonlocal ok
        report(env, Code.EXERCISE, token, message, offset=offset)
        ok = False

    options, body, consumed = split_option_lines(token.content)
    values: dict[str, str] = {}
    for index, key, value in options:
        if key not in OPTIONS:
            problem(f"unknown exercise option ':{key}:' (known: {', '.join(f':{k}:' for k in OPTIONS)})", 1 + index)
        elif key in values:
            problem(f"exercise option ':{key}:' given twice", 1 + index)
        values[key] = value
    defines = tuple(n for n in re.split(r"[,\s]+", values.get("defines", "")) if n)
    defines_offset = 1 + next((i for i, k, _ in options if k == "defines"), -1)
    for name in defines:
        if not name.isidentifier():
            problem(f"':defines:' lists '{name}', which is not a Python name", defines_offset)
    exercise_id = values.get("id", "")
    id_offset = 1 + next((i for i, k, _ in options if k == "id"), -1)
    if not exercise_id:
        problem("exercise needs an id: a line ':id: a-short-name' right under ```{exercise}")
    elif not ID_RE.match(exercise_id):
        problem(f"exercise id must be letters, digits, '-' or '_', starting with a letter: '{exercise_id}'", id_offset)
    elif exercise_id in seen:
        problem(f"duplicate exercise id '{exercise_id}' (already used on line {seen[exercise_id]})", id_offset)
    else:
        seen[exercise_id] = parse_context(env).line_offset + fence + 1 + id_offset
    if not token.info.strip():
        problem("exercise needs a title: ```{exercise} 标题")

    body_offset = 1 + consumed  # lines from the fence line to the body's first line
    task_lines, parts = _split_parts(body)
    if not "\n".join(task_lines).strip():
        problem("exercise has no task: write what to do (Markdown) before the first '--- starter'", body_offset)
    found: dict[str, tuple[int, str]] = {}
    hints: list[tuple[int, str]] = []
    for name, at, lines in parts:
        offset = body_offset + at
        if name not in PARTS:
            problem(f"unknown exercise part '--- {name}' (known: {', '.join('--- ' + p for p in PARTS)})", offset)
            continue
        text = "\n".join(lines)
        first = offset + 1 + _leading_blank(lines)
        if name == "hint":
            if not text.strip():
                problem("exercise hint is empty", offset)
            hints.append((first, text))
            continue
        if name in found:
            problem(f"exercise part '--- {name}' given twice", offset)
            continue
        if not text.strip():
            problem(f"exercise part '--- {name}' is empty", offset)
            continue
        found[name] = (first, _code(lines))
    for name in REQUIRED:
        if name not in found and not any(n == name for n, _, _ in parts):
            problem(f"exercise has no '--- {name}' part", body_offset)
    if not hints:
        problem("exercise needs at least one '--- hint' (at most four)", body_offset)
    elif len(hints) > MAX_HINTS:
        problem(f"exercise has {len(hints)} hints; at most {MAX_HINTS} open one at a time", hints[MAX_HINTS][0] - 1)

    for name, (first, code) in found.items():
        try:
            tree = ast.parse(code, f"<{name}>")
        except SyntaxError as exc:
            problem(f"exercise part '--- {name}' is not valid Python: {exc.msg}", first + (exc.lineno or 1) - 1)
            continue
        if name == "solution" and defines:
            missing = [n for n in defines if n.isidentifier() and n not in _top_level_names(tree)]
            if missing:
                problem(
                    f"':defines:' names {', '.join(missing)}, which the solution does not define at its top level "
                    "(a def, class, import or assignment)",
                    defines_offset,
                )
        if name in ("checks", "hidden"):
            checks = [
                n
                for n in tree.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith(CHECK_PREFIX)
            ]
            if not checks:
                problem(
                    f"exercise part '--- {name}' defines no check: write functions `def check_…():` (docstring: "
                    "what the learner reads), using expect_close / expect_equal / expect_shape / expect_true",
                    first,
                )
            for n in checks:
                if n.args.args or n.args.posonlyargs or n.args.kwonlyargs or n.args.vararg or n.args.kwarg:
                    problem(f"check '{n.name}' takes no arguments", first + n.lineno - 1)
    if not ok:
        return None

    context = parse_context(env)
    title = parse_inline_at(md, token.info.strip(), env, fence)
    task_first = body_offset + _leading_blank(task_lines)
    task = parse_block_at(md, "\n".join(task_lines).strip("\n"), env, fence + task_first)
    hint_tokens = [parse_block_at(md, text.strip("\n"), env, fence + first) for first, text in hints]
    exercise = Exercise(
        token=token,
        id=exercise_id,
        starter=found["starter"][1],
        checks=found["checks"][1],
        hidden=found.get("hidden", (0, ""))[1],
        solution=found["solution"][1],
        lines={name: first for name, (first, _) in found.items()},
        defines=defines,
    )
    context.facts.extra_ids.add(exercise.element_id)
    context.facts.exercise_ids.append(exercise.id)
    return ExerciseBlock(exercise, title, task, hint_tokens)


def _top_level_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level: functions, classes, imports, assignments."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def exercise_plugin(md: MarkdownIt, *, render: ExerciseRender) -> None:
    """Register ```{exercise}: check and collect the page's exercises while parsing, render them afterwards."""

    def collect(state: Any) -> None:
        context = parse_context(state.env)
        seen: dict[str, int] = {}
        defined: list[str] = []  # the names the exercises so far hand to the page: the next one's code sees them
        for token in state.tokens:
            if token.type != "exercise":
                continue
            block = parse_exercise(md, token, state.env, seen)
            token.meta = {**(token.meta or {}), "exercise": block, "first": not context.exercises}
            if block is not None:
                block.exercise.uses = tuple(n for n in defined if n not in block.exercise.defines)
                defined += [n for n in block.exercise.defines if n not in defined]
                context.exercises.append(block.exercise)
        if context.exercises:
            context.facts.features.update(("cells", "exercise"))

    md.core.ruler.push("exercises", collect)

    def render_token(token: Token, env: dict) -> str:
        block = (token.meta or {}).get("exercise")
        if block is None:
            return ""
        if block.exercise.element_id in parse_context(env).facts.heading_ids:
            report(env, Code.EXERCISE, token, f"exercise element id '{block.exercise.element_id}' is also a heading id")
        return render(block, env, md)

    register_directive(md, "exercise", render_token)
