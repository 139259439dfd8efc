"""Quizzes: ```{quiz} with a YAML body (id, question, type, options, explanation).

Validation and the parsing of every Markdown string of a quiz happen in a core rule (right after the
directive rule), not at render time: formulas inside the YAML are invisible to the main parse, so they must
be added to the page facts (with their source line) before the math stage typesets the site, and internal
links must reach the link checker. The parsed inline tokens are kept in `token.meta["quiz"]` and rendered
later with the page's env (which by then holds the typeset math).

The options are shown in a shuffled order, the same on every build: the permutation is seeded by the page and the
quiz id (`display_order`), so where the right answer sits tells the reader nothing. Each option carries a stable
key (a hash of its text, `option_key`) that the browser stores instead of a position; the order a quiz was
written in is only the author's. `check_answer_positions` (a site-wide check, run after the link check) fails the
build when one position holds more than half of the site's correct answers.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import yaml
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

from ..errors import Code, Problems
from ..model import Link, Page, ParseContext, QuizAnswer, parse_context
from ..strict_yaml import compose_and_load
from .directive import register_directive, report

QUIZ_KEYS = ("id", "question", "type", "options", "explanation", "tell-count")
OPTION_KEYS = ("text", "correct", "feedback")
QUIZ_TYPES = ("single", "multiple")
QUIZ_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


@dataclass
class InlineText:
    """A Markdown string of the quiz, parsed once (inline tokens) so it can be rendered with the page env."""

    source: str
    tokens: list[Token]


@dataclass
class QuizOption:
    text: InlineText
    correct: bool
    feedback: InlineText | None


@dataclass
class Quiz:
    id: str
    question: InlineText
    type: str
    options: list[QuizOption]
    explanation: InlineText | None
    tell_count: bool = False  # a multiple-choice hint names how many options are right only when the author asks
    lines: dict[str, int] = field(default_factory=dict)  # key → 0-based line within the body
    order: list[int] = field(default_factory=list)  # the options as shown: authored indexes (empty: as written)
    keys: list[str] = field(default_factory=list)  # each authored option's stable key (option_key of its text)

    @property
    def correct_indexes(self) -> list[int]:
        return [i for i, o in enumerate(self.options) if o.correct]

    @property
    def shown(self) -> list[int]:
        """Authored option indexes in the order the reader sees them."""
        return self.order or list(range(len(self.options)))

    @property
    def correct_positions(self) -> list[int]:
        """Where the right answers are shown (0 = the first option on screen)."""
        return [pos for pos, i in enumerate(self.shown) if self.options[i].correct]


def option_key(text: str) -> str:
    """A stable name for an option: its text's hash. Stored answers use it, so they survive the shuffle and an
    author's reordering; an edited option is a new option (an answer given to the old text is dropped)."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:10]


def display_order(n_options: int, seed: str) -> list[int]:
    """The options' shown order (authored indexes), a permutation fixed by `seed` (page and quiz id): the same on
    every build and every machine (random.Random with an integer seed is stable across Python versions)."""
    rng = random.Random(int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:8], "big"))
    order = list(range(n_options))
    rng.shuffle(order)
    return order


def quiz_seed(rel: str, quiz_id: str) -> str:
    """The shuffle's seed: the page's file name (without .md) and the quiz id."""
    return f"{PurePosixPath(str(rel).replace(chr(92), '/')).stem}/{quiz_id}"


QuizRender = Callable[[Quiz, dict, MarkdownIt], str]


def _key_lines(node: yaml.MappingNode) -> dict[str, tuple[int, yaml.Node]]:
    """0-based line of every key of a mapping node, plus its value node."""
    return {k.value: (k.start_mark.line, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)}


def _value_line(node: yaml.Node) -> int:
    """First line where a scalar's text starts (a `|`/`>` block scalar starts on the next line)."""
    line = node.start_mark.line
    if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
        line += 1
    return line


CJK_CHAR_RE = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")


def _join_cjk_lines(children: list[Token]) -> None:
    """A line break inside a YAML block scalar is not a space in Chinese: drop it between CJK characters."""
    for i, child in enumerate(children):
        if child.type != "softbreak":
            continue
        before = children[i - 1].content[-1:] if i > 0 else ""
        after = children[i + 1].content[:1] if i + 1 < len(children) else ""
        if CJK_CHAR_RE.match(before) or CJK_CHAR_RE.match(after):
            child.type, child.content = "text", ""


def quiz_plugin(md: MarkdownIt, *, render: QuizRender | None = None) -> None:
    """Register ```{quiz}; `render(quiz, env, md)` turns a validated quiz into HTML (default: render_quiz)."""
    render = render or render_quiz

    def parse_inline(text: str, env: dict, token: Token, body_line: int) -> InlineText:
        """Parse a quiz string as inline Markdown and hand its formulas and links to the page's stages."""
        context = parse_context(env)
        # token.map[0] is the fence line; the YAML body starts on the line after it.
        base = (token.map[0] if token.map else 0) + 1 + body_line
        # The string's own line is the scratch context's first line: every plugin that reports a problem in it (a
        # `javascript:` link, an image from outside, a synonym) names that line, not the quiz's or the page's.
        scratch = ParseContext(context.rel, context.line_offset + base, context.problems, context.planned_slugs)
        scratch.scratch["inline_line"] = 0  # where the glossary check (glossary.py) reports a synonym
        # Quiz strings are text with Markdown, never raw HTML: `<b>` in a question shows as typed.
        html_allowed = md.options.get("html", False)
        md.options["html"] = False
        try:
            tokens = md.parseInline(text.strip(), scratch.env())
        finally:
            md.options["html"] = html_allowed
        for inline in tokens:
            _join_cjk_lines(inline.children or [])
        context.facts.formulas.extend((f, base + line) for f, line in scratch.facts.formulas)
        context.facts.links.extend(Link(link.href, base + link.line) for link in scratch.facts.links)
        return InlineText(text, tokens)

    def validate(token: Token, env: dict, seen: dict[str, int]) -> Quiz | None:
        def problem(message: str, line: int = 0) -> None:
            report(env, Code.QUIZ, token, message, offset=line + 1)

        try:
            root, data = compose_and_load(token.content)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem(f"quiz is not valid YAML: {getattr(exc, 'problem', None) or exc}", mark.line if mark else 0)
            return None
        if not isinstance(data, dict) or not isinstance(root, yaml.MappingNode):
            problem("quiz body must be YAML `key: value` lines (id, question, type, options, explanation)")
            return None
        keys = _key_lines(root)
        ok = True
        for key, (line, _) in keys.items():
            if key not in QUIZ_KEYS:
                problem(f"unknown quiz key '{key}' (allowed: {', '.join(QUIZ_KEYS)})", line)
                ok = False

        quiz_id = data.get("id")
        id_line = keys.get("id", (0, None))[0]
        if quiz_id is None:
            problem("quiz has no `id` (a short name like `why-sqrt-dk`, unique on the page)")
            ok = False
        elif not isinstance(quiz_id, str) or not QUIZ_ID_RE.match(quiz_id):
            problem(f"quiz id must be letters, digits, '-' or '_' starting with a letter, got {quiz_id!r}", id_line)
            ok = False
        elif quiz_id in seen:
            problem(f"duplicate quiz id '{quiz_id}' (already used on line {seen[quiz_id]})", id_line)
            ok = False
        else:
            seen[quiz_id] = parse_context(env).line_offset + (token.map[0] if token.map else 0) + 2 + id_line

        def text_of(key: str, value: Any, line: int, required: bool) -> str | None:
            nonlocal ok
            if value is None:
                if required:
                    problem(f"quiz has no `{key}`", line)
                    ok = False
                return None
            if isinstance(value, bool) or not isinstance(value, (str, int, float)) or str(value).strip() == "":
                problem(f"quiz `{key}` must be non-empty text, got {value!r}", line)
                ok = False
                return None
            return str(value)

        question = text_of("question", data.get("question"), keys.get("question", (0, None))[0], True)
        explanation = text_of("explanation", data.get("explanation"), keys.get("explanation", (0, None))[0], False)

        quiz_type = data.get("type", "single")
        type_line = keys.get("type", (0, None))[0]
        if quiz_type not in QUIZ_TYPES:
            problem(f"quiz type must be 'single' or 'multiple', got {quiz_type!r}", type_line)
            ok = False

        options_line, options_node = keys.get("options", (0, None))
        raw_options = data.get("options")
        options: list[tuple[str, bool, str | None, int, dict[str, yaml.Node]]] = []
        if not raw_options:
            problem("quiz has no options (give a list under `options:`, each with `text`)", options_line)
            return None
        if not isinstance(raw_options, list) or not isinstance(options_node, yaml.SequenceNode):
            problem("quiz `options` must be a list of `- text: …` items", options_line)
            return None
        for n, (raw, node) in enumerate(zip(raw_options, options_node.value), start=1):
            opt_line = node.start_mark.line
            if not isinstance(raw, dict) or not isinstance(node, yaml.MappingNode):
                problem(f"option {n} must be a mapping with `text` (and `correct`, `feedback`)", opt_line)
                ok = False
                continue
            opt_keys = _key_lines(node)
            for key, (line, _) in opt_keys.items():
                if key not in OPTION_KEYS:
                    problem(f"unknown key '{key}' in option {n} (allowed: {', '.join(OPTION_KEYS)})", line)
                    ok = False
            text = raw.get("text")
            if (
                text is None
                or isinstance(text, bool)
                or not isinstance(text, (str, int, float))
                or str(text).strip() == ""
            ):
                problem(f"option {n} has no text", opt_line)
                ok = False
                continue
            correct = raw.get("correct", False)
            if not isinstance(correct, bool):
                problem(f"option {n}: `correct` must be true or false, got {correct!r}", opt_keys["correct"][0])
                ok = False
                correct = None  # neither right nor wrong: "no correct option" would only add noise
            feedback = raw.get("feedback")
            if feedback is not None and (not isinstance(feedback, (str, int, float)) or isinstance(feedback, bool)):
                problem(f"option {n}: `feedback` must be text, got {feedback!r}", opt_keys["feedback"][0])
                ok = False
                feedback = None
            options.append((str(text), correct, None if feedback is None else str(feedback), opt_line, opt_keys))

        texts: dict[str, int] = {}
        for n, (text, _, _, opt_line, _) in enumerate(options, start=1):
            if text.strip() in texts:
                problem(
                    f"option {n} has the same text as option {texts[text.strip()]} (each option must differ)", opt_line
                )
                ok = False
            texts.setdefault(text.strip(), n)
        n_correct = sum(1 for o in options if o[1] is True)
        undecided = any(o[1] is None for o in options)
        name = f"quiz '{quiz_id}'" if isinstance(quiz_id, str) else "quiz"
        if options and n_correct == 0 and not undecided and len(options) == len(raw_options):
            problem(f"{name} has no correct option (mark at least one with `correct: true`)", options_line)
            ok = False
        if quiz_type == "single" and n_correct > 1:
            problem(
                f"{name} is type 'single' but has {n_correct} correct options (use `type: multiple`)",
                keys.get("type", (options_line, None))[0],
            )
            ok = False
        tell_count = data.get("tell-count", False)
        if not isinstance(tell_count, bool):
            problem(f"quiz `tell-count` must be true or false, got {tell_count!r}", keys["tell-count"][0])
            ok = False
        if not ok or question is None:
            return None

        def node_line(key: str, mapping: dict[str, tuple[int, yaml.Node]]) -> int:
            return _value_line(mapping[key][1]) if key in mapping else 0

        quiz = Quiz(
            id=quiz_id,
            question=parse_inline(question, env, token, node_line("question", keys)),
            type=quiz_type,
            options=[
                QuizOption(
                    parse_inline(text, env, token, node_line("text", opt_keys)),
                    bool(correct),
                    parse_inline(feedback, env, token, node_line("feedback", opt_keys)) if feedback else None,
                )
                for text, correct, feedback, _, opt_keys in options
            ],
            explanation=parse_inline(explanation, env, token, node_line("explanation", keys)) if explanation else None,
            tell_count=bool(tell_count),
            lines={k: v[0] for k, v in keys.items()},
            order=display_order(len(options), quiz_seed(parse_context(env).rel, quiz_id)),
            keys=[option_key(text) for text, *_ in options],
        )
        return quiz

    def collect(state: Any) -> None:
        env = state.env
        context = parse_context(env)
        seen: dict[str, int] = context.scratch.setdefault("quiz_lines", {})
        for token in state.tokens:
            if token.type != "quiz":
                continue
            quiz = validate(token, env, seen)
            token.meta["quiz"] = quiz
            if quiz is not None:
                context.facts.quiz_ids.append(quiz.id)
                line = token.map[0] if token.map else 0
                context.facts.quiz_answers.append(
                    QuizAnswer(quiz.id, line, len(quiz.options), tuple(quiz.correct_positions))
                )
                context.facts.extra_ids.add(f"quiz-{quiz.id}")
                context.facts.features.add("quiz")

    def render_token(token: Token, env: dict) -> str:
        quiz = token.meta.get("quiz")
        return render(quiz, env, md) if quiz is not None else ""

    register_directive(md, "quiz", render_token)
    md.core.ruler.after("directive_quiz", "quiz_collect", collect)


def render_inline(md: MarkdownIt, text: InlineText | None, env: dict) -> str:
    """HTML of a parsed quiz string, rendered with the page's env (math is typeset by then)."""
    if text is None:
        return ""
    return md.renderer.render(text.tokens, md.options, env)


# ------------------------------------------------------------------------------------------ the HTML
# Plain, accessible markup that works without JavaScript: a <fieldset> whose <legend> is the question, native
# radio/checkbox inputs with labels, and the explanation (with the correct answer) in a <details>. The question
# is the section's heading (a heading inside the legend), so the quiz is reachable by heading navigation.
# theme/js/site/quiz.js adds feedback, 再试一次, 显示答案 and the stored progress on top of it; it keeps the
# answer hidden until the reader is right, has tried twice, or asks for it.

OPTION_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def option_letter(index: int) -> str:
    return OPTION_LETTERS[index] if index < len(OPTION_LETTERS) else str(index + 1)


def render_quiz(quiz: Quiz, env: dict, md: MarkdownIt) -> str:
    qid = escapeHtml(quiz.id)
    dom_id = f"quiz-{qid}"
    input_type = "radio" if quiz.type == "single" else "checkbox"
    if quiz.type == "single":
        hint = "单选题"
    elif quiz.tell_count:
        hint = f"多选题（共 {len(quiz.correct_indexes)} 个正确选项）"
    else:
        hint = "多选题（可选多项）"
    options = []
    # Shown in the shuffled order; each option names its stable key (what the browser stores) and its authored
    # index (data-index: answers stored before the shuffle named that, theme/js/site/quiz.js reads them).
    for pos, i in enumerate(quiz.shown):
        option = quiz.options[i]
        key = escapeHtml(quiz.keys[i] if quiz.keys else str(i))
        feedback = render_inline(md, option.feedback, env)
        options.append(
            f'<li class="quiz-option" data-index="{i}" data-key="{key}"{" data-correct" if option.correct else ""}>'
            f'<label class="quiz-choice"><input type="{input_type}" name="{dom_id}" value="{key}">'
            f'<span class="quiz-letter">{option_letter(pos)}</span>'
            f'<span class="quiz-option-text">{render_inline(md, option.text, env)}</span></label>'
            f'<div class="quiz-feedback" id="{dom_id}-fb-{key}" hidden>{feedback}</div></li>'
        )
    answer = "、".join(option_letter(pos) for pos in quiz.correct_positions)
    explanation = render_inline(md, quiz.explanation, env)
    explanation_html = f'<p class="quiz-explanation-text">{explanation}</p>' if explanation else ""
    return (
        f'<section class="quiz" id="{dom_id}" data-quiz-id="{qid}" data-quiz-type="{quiz.type}" '
        f'aria-labelledby="{dom_id}-q">\n'
        f'<form class="quiz-form" novalidate>'
        f'<fieldset class="quiz-fieldset">'
        f'<legend class="quiz-question" id="{dom_id}-q"><h3 class="quiz-heading"><span class="quiz-badge">小测验</span>'
        f'<span class="quiz-question-text">{render_inline(md, quiz.question, env)}</span></h3></legend>'
        f'<p class="quiz-hint">{hint}</p>'
        f'<ol class="quiz-options">{"".join(options)}</ol>'
        f"</fieldset>"
        f'<div class="quiz-actions"><button type="submit" class="quiz-submit">提交</button>'
        f'<button type="button" class="quiz-retry" hidden>再试一次</button>'
        f'<button type="button" class="quiz-reveal" hidden>显示答案</button></div>'
        f'<p class="quiz-result" role="status" aria-live="polite"></p>'
        f"</form>\n"
        f'<details class="quiz-explanation"><summary>查看答案与解析</summary>'
        f'<p class="quiz-answer">正确答案：{answer}</p>{explanation_html}</details>\n'
        f"</section>\n"
    )


# ------------------------------------------------------------------------------------------ site-wide check

MIN_QUIZZES_FOR_BALANCE = 4  # with fewer quizzes a shared position is chance, not a pattern


def check_answer_positions(pages: list[Page], problems: Problems) -> None:
    """No position on screen (A, B, C, …) may hold more than half of the site's correct answers once the site
    has MIN_QUIZZES_FOR_BALANCE quizzes: a reader must not learn that “the answer is usually A”. Reported at the
    first quiz whose answer sits there."""
    answers = [(page, a) for page in pages for a in page.facts.quiz_answers]
    if len(answers) < MIN_QUIZZES_FOR_BALANCE:
        return
    counts: dict[int, int] = {}
    for _, a in answers:
        for pos in a.positions:
            counts[pos] = counts.get(pos, 0) + 1
    total = sum(counts.values())
    for pos, n in sorted(counts.items()):
        if 2 * n <= total:
            continue
        page, first = next((p, a) for p, a in answers if pos in a.positions)
        problems.add(
            Code.QUIZ,
            page.source.rel,
            page.source.body_line + first.line + 1,
            f"{n} of the site's {total} correct answers are shown as option {option_letter(pos)} (more than half): "
            f"the shuffle is seeded by the page and the quiz id, so renaming a quiz (e.g. '{first.id}') reshuffles it",
        )
