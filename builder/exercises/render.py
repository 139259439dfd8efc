"""An exercise as HTML: its title and task, an editor holding the starter code (the structure of a code cell, so the
cells' controller gives it CodeMirror, edits kept across visits and Stop) and its buttons. What the learner opens
later — the public checks, the hints, the reference solution — and what 检查 runs (the checks, the hidden checks
obfuscated: a static site cannot keep a secret, this is not grading) are not in the page: they are the exercise's
data script (`assets/exercises/<id>-<hash>.js`, `Course.exercises.d<hash>`), which theme/js/cells/exercise.js loads
when the exercise nears the view or the learner acts — a page of six exercises keeps its first view light. The words
are the theme's (theme/strings.yml, `exercise_…`); the page's first exercise carries them for the script."""

from __future__ import annotations

import base64
import hashlib
import json
from functools import lru_cache
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

from .. import strict_yaml
from ..bundle import browser_data_script
from ..cells.render import highlight_cell_source
from ..markdown.directive import render_inline_tokens
from ..markdown.exercise import ExerciseBlock
from ..markup_policy import in_script
from ..model import parse_context
from .verify import imports_of

THEME_STRINGS = Path(__file__).resolve().parents[2] / "theme" / "strings.yml"


@lru_cache(maxsize=1)
def _theme_strings() -> dict[str, str]:
    return {k: str(v) for k, v in (strict_yaml.load(THEME_STRINGS.read_text("utf-8")) or {}).items()}


def strings_of(env: dict) -> dict[str, str]:
    """The exercise words: the site's (ParseContext.strings, set by the build) or the theme's defaults."""
    words = parse_context(env).strings or _theme_strings()
    return {k: v for k, v in words.items() if k == "exercise" or k.startswith("exercise_")}


def obfuscate(text: str) -> str:
    """Hidden checks in the page: the UTF-8 bytes reversed and base64'd — out of sight, not secret."""
    return base64.b64encode(text.encode("utf-8")[::-1]).decode("ascii")


def render_exercise(block: ExerciseBlock, env: dict, md: MarkdownIt) -> str:
    ex = block.exercise
    ui = strings_of(env)
    title = render_inline_tokens(md, block.title, env)
    task = md.renderer.render(block.task, md.options, env)
    eid = escapeHtml(ex.element_id)
    plain_title = escapeHtml(ex.id)
    source_hash = hashlib.sha256(ex.starter.encode("utf-8")).hexdigest()[:16]
    n_lines = ex.starter.count("\n")
    toolbar = (
        f'<div class="cell-toolbar" role="group" aria-label="{escapeHtml(ui["exercise"])}">'
        f'<span class="cell-name" aria-hidden="true">{escapeHtml(ui["exercise"])} · <code>{plain_title}</code></span>'
        '<span class="cell-modified" hidden>已修改</span>'
        f'<button type="button" class="cell-btn cell-run exercise-check" data-action="run" disabled '
        f'title="{escapeHtml(ui["exercise_check_title"])}" aria-keyshortcuts="Control+Enter Meta+Enter">'
        f"{escapeHtml(ui['exercise_check'])}</button>"
        f'<button type="button" class="cell-btn cell-stop" data-action="stop" disabled hidden>'
        f"{escapeHtml(ui['exercise_stop'])}</button>"
        f'<button type="button" class="cell-btn cell-reset" data-action="reset" disabled '
        f'title="{escapeHtml(ui["exercise_reset_code_title"])}">{escapeHtml(ui["exercise_reset_code"])}</button>'
        "</div>"
    )
    code_label = escapeHtml(ui["exercise_code_label"].replace("{title}", ex.id))
    editor = (
        f'<div class="code-cell exercise-cell" role="region" id="{eid}-code" data-cell-id="{eid}" '
        f'data-exercise="{escapeHtml(ex.id)}" '
        f'data-source-hash="{source_hash}" style="--cell-lines: {n_lines}" aria-label="{code_label}">'
        f'{toolbar}<div class="cell-notice" role="status" hidden></div>'
        f'<div class="cell-editor"><pre class="cell-source" role="group" tabindex="0" aria-label="{code_label}">'
        f'<code class="language-python">{highlight_cell_source(ex.starter)}</code></pre></div>'
        '<div class="cell-output" data-origin="build" data-empty><div class="cell-output-head">'
        f'<span class="cell-output-label">{escapeHtml(ui["exercise_output"])}</span>'
        '<span class="cell-status" role="status" aria-live="polite"></span></div>'
        f'<pre class="cell-log" role="log" aria-live="polite" aria-label="{escapeHtml(ui["exercise_output"])}" '
        'tabindex="0"></pre></div></div>'
    )
    public = (
        f'<details class="exercise-public"><summary>{escapeHtml(ui["exercise_public_checks"])}</summary>'
        '<pre class="exercise-code" tabindex="0"><code class="language-python"></code></pre></details>'
    )
    total = len(block.hints)
    extras = {  # loaded with the exercise's data script, not part of the page's first view
        "checks": ex.checks,
        "hidden": obfuscate(ex.hidden),
        "checks_html": highlight_cell_source(ex.checks),
        "hints": [md.renderer.render(tokens, md.options, env) for tokens in block.hints],
        "solution": ex.solution,
        "solution_html": highlight_cell_source(ex.solution),
    }
    extras_json = in_script(json.dumps(extras, ensure_ascii=False, sort_keys=True))
    key = hashlib.sha256(extras_json.encode()).hexdigest()[:12]
    extras_path = f"assets/exercises/{ex.id}-{key}.js"
    parse_context(env).facts.files[extras_path] = browser_data_script("exercises", f"d{key}", extras_json)
    first_hint = escapeHtml(ui["exercise_hint_button"].replace("{n}", "1").replace("{total}", str(total)))
    help_bar = (
        f'<div class="exercise-help" role="group" aria-label="{escapeHtml(ui["exercise"])}">'
        '<button type="button" class="cell-btn exercise-hint-btn" data-exercise-action="hint" disabled>'
        f"{first_hint}</button>"
        f'<button type="button" class="cell-btn exercise-solution-btn" data-exercise-action="solution" disabled '
        f'aria-expanded="false">{escapeHtml(ui["exercise_show_solution"])}</button>'
        f'<button type="button" class="cell-btn exercise-reset-btn" data-exercise-action="reset" disabled>'
        f"{escapeHtml(ui['exercise_reset'])}</button>"
        f'<span class="exercise-state" data-state="new">{escapeHtml(ui["exercise_status_new"])}</span>'
        "</div>"
        '<div class="exercise-confirm" role="group" hidden>'
        f"<p>{escapeHtml(ui['exercise_solution_confirm'])}</p>"
        '<button type="button" class="cell-btn" data-exercise-action="solution-yes">'
        f"{escapeHtml(ui['exercise_solution_yes'])}</button>"
        '<button type="button" class="cell-btn" data-exercise-action="solution-no">'
        f"{escapeHtml(ui['exercise_solution_no'])}</button>"
        "</div>"
    )
    data = {
        "id": ex.id,
        "imports": imports_of(ex.starter, ex.checks, ex.hidden, ex.solution),
        "hints": total,
        "extras": {"data": extras_path, "key": key},
        **({"defines": list(ex.defines)} if ex.defines else {}),
        **({"uses": list(ex.uses)} if ex.uses else {}),
    }
    first = bool((block.exercise.token.meta or {}).get("first"))
    defines_attr = f' data-defines="{escapeHtml(" ".join(ex.defines))}"' if ex.defines else ""
    words = in_script(json.dumps(ui, ensure_ascii=False))
    strings = f'<script type="application/json" class="exercise-strings">{words}</script>' if first else ""
    return (
        f'<div class="exercise" id="{eid}" data-exercise-id="{escapeHtml(ex.id)}"{defines_attr} role="region" '
        f'aria-labelledby="{eid}-title">'
        f'<p class="exercise-title" id="{eid}-title">'
        f'<span class="exercise-kicker">{escapeHtml(ui["exercise"])}</span> {title}</p>'
        f'<div class="exercise-task">{task}</div>{editor}{public}'
        f'<div class="exercise-result" role="status" aria-live="polite" aria-atomic="true"></div>'
        f'<ol class="exercise-checks" hidden></ol>'
        f"{help_bar}"
        f'<div class="exercise-hints"></div><div class="exercise-solution" hidden>'
        f'<p class="exercise-solution-title">{escapeHtml(ui["exercise_solution"])}</p>'
        '<div class="exercise-solution-body"></div>'
        '<button type="button" class="cell-btn" data-exercise-action="use-solution">'
        f"{escapeHtml(ui['exercise_use_solution'])}</button></div>"
        f'<script type="application/json" class="exercise-data">{in_script(json.dumps(data, ensure_ascii=False))}'
        "</script>"
        f"{strings}</div>\n"
    )
