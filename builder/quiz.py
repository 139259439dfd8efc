"""Quizzes, the build side: the ```{quiz} directive rendered as plain, accessible HTML.

The markup works without JavaScript: a <fieldset> whose <legend> is the question, native radio/checkbox
inputs with labels, and the explanation (with the correct answer) in a <details>. theme/js/site/quiz.js
adds instant feedback, 再试一次 and the stored progress on top of it.
"""
from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

from .plugins.quiz import Quiz, quiz_plugin, render_inline

OPTION_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def option_letter(index: int) -> str:
    return OPTION_LETTERS[index] if index < len(OPTION_LETTERS) else str(index + 1)


def render_quiz(quiz: Quiz, env: dict, md: MarkdownIt) -> str:
    qid = escapeHtml(quiz.id)
    dom_id = f"quiz-{qid}"
    input_type = "radio" if quiz.type == "single" else "checkbox"
    hint = "单选题" if quiz.type == "single" else "多选题（可选多项）"
    options = []
    for i, option in enumerate(quiz.options):
        feedback = render_inline(md, option.feedback, env)
        options.append(
            f'<li class="quiz-option" data-index="{i}"{" data-correct" if option.correct else ""}>'
            f'<label class="quiz-choice"><input type="{input_type}" name="{dom_id}" value="{i}">'
            f'<span class="quiz-letter">{option_letter(i)}</span>'
            f'<span class="quiz-option-text">{render_inline(md, option.text, env)}</span></label>'
            f'<div class="quiz-feedback" id="{dom_id}-fb-{i}" hidden>{feedback}</div></li>'
        )
    answer = "、".join(option_letter(i) for i in quiz.correct_indexes)
    explanation = render_inline(md, quiz.explanation, env)
    explanation_html = f'<p class="quiz-explanation-text">{explanation}</p>' if explanation else ""
    return (
        f'<section class="quiz" id="{dom_id}" data-quiz-id="{qid}" data-quiz-type="{quiz.type}" '
        f'aria-labelledby="{dom_id}-q">\n'
        f'<form class="quiz-form" novalidate>'
        f'<fieldset class="quiz-fieldset">'
        f'<legend class="quiz-question" id="{dom_id}-q"><span class="quiz-badge">小测验</span>'
        f'<span class="quiz-question-text">{render_inline(md, quiz.question, env)}</span></legend>'
        f'<p class="quiz-hint">{hint}</p>'
        f'<ol class="quiz-options">{"".join(options)}</ol>'
        f'</fieldset>'
        f'<div class="quiz-actions"><button type="submit" class="quiz-submit">提交</button>'
        f'<button type="button" class="quiz-retry" hidden>再试一次</button></div>'
        f'<p class="quiz-result" role="status" aria-live="polite"></p>'
        f'</form>\n'
        f'<details class="quiz-explanation"><summary>查看答案与解析</summary>'
        f'<p class="quiz-answer">正确答案：{answer}</p>{explanation_html}</details>\n'
        f'</section>\n'
    )


def markdown_plugin(md: MarkdownIt) -> None:
    quiz_plugin(md, render=render_quiz)
