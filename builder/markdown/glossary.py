"""The glossary in the prose (content/glossary.yml, loaded by builder/content.py): one word per concept.

- A synonym where the glossary's chosen term is expected is a warning on its line (the build goes on).
- The first use of each term on a page becomes a keyboard-accessible tooltip: a focusable <dfn> described by
  its hidden definition (hover, focus or tap shows it; Escape hides it — theme/js/site/glossary.js).
Synonyms are also looked for in a quiz's strings (question, options, feedback, explanation), reported on the line
of the YAML key that holds the string (builder/markdown/quiz.py puts it in the inline parse's scratch as
`inline_line`); a quiz string gets no tooltip. Code and math are never looked at.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

from ..errors import Code
from ..model import GlossaryTerm, parse_context


def _html(content: str) -> Token:
    token = Token("html_inline", "", 0)
    token.content = content
    return token


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def glossary_plugin(md: MarkdownIt, *, terms: Sequence[GlossaryTerm]) -> None:
    synonyms = sorted(((s, t) for t in terms for s in t.synonyms), key=lambda x: -len(x[0]))  # longest first
    chosen = sorted(terms, key=lambda t: -len(t.term))

    def tooltip(term: GlossaryTerm, n: int) -> list[Token]:
        tip = f"{term.term}（{term.english}）：{term.definition}" if term.english else f"{term.term}：{term.definition}"
        return [
            _html(f'<dfn class="gloss" tabindex="0" aria-describedby="gloss-{n}">'),
            _text(term.term),
            _html(f'<span class="gloss-tip" role="tooltip" id="gloss-{n}">{escapeHtml(tip)}</span></dfn>'),
        ]

    def warn_synonyms(text: str, context: Any, line: int) -> None:
        """A warning for each synonym in `text` (0-based body line `line`), longest first, each place once."""
        for word, term in synonyms:
            if word in text.replace(term.term, "\0" * len(term.term)):
                context.problems.warn(
                    Code.GLOSSARY,
                    context.rel,
                    context.line_offset + line + 1,
                    f"'{word}' is a synonym: the glossary's word is '{term.term}'",
                )
                text = text.replace(word, "\0" * len(word))

    def check(state: Any) -> None:
        context = parse_context(state.env)
        if getattr(state, "inlineMode", False):
            # a quiz string (md.parseInline, its own scratch context): synonyms are warned about on the line of its
            # YAML key; no tooltip (the quiz renders its strings itself)
            line = context.scratch.get("inline_line")
            if line is not None:
                for token in state.tokens:
                    text = "".join(c.content for c in token.children or [] if c.type == "text")
                    warn_synonyms(text, context, line)
            return
        seen: set[str] = context.scratch.setdefault("glossary_seen", set())
        in_heading = False
        for token in state.tokens:
            if token.type == "heading_open":
                in_heading = True
            elif token.type == "heading_close":
                in_heading = False
            if token.type != "inline" or not token.children or token.map is None:
                continue
            line = token.map[0]
            out: list[Token] = []
            in_link = 0
            for child in token.children:
                if child.type in ("softbreak", "hardbreak"):
                    line += 1
                in_link += child.type == "link_open"
                in_link -= child.type == "link_close"
                if child.type != "text":
                    out.append(child)
                    continue
                warn_synonyms(child.content, context, line)
                if in_heading or in_link:
                    out.append(child)
                    continue
                out.extend(_first_uses(child.content, chosen, seen, tooltip, context))
            token.children = out

    md.core.ruler.push("glossary", check)


def _first_uses(text: str, chosen: list[GlossaryTerm], seen: set[str], tooltip: Any, context: Any) -> list[Token]:
    """`text` as tokens, the first occurrence on the page of each glossary term wrapped in its tooltip."""
    for term in chosen:
        at = text.find(term.term)
        if term.term in seen or at < 0:
            continue
        seen.add(term.term)
        n = context.scratch["glossary_n"] = context.scratch.get("glossary_n", 0) + 1
        before, after = text[:at], text[at + len(term.term) :]
        return (
            ([*_first_uses(before, chosen, seen, tooltip, context)] if before else [])
            + tooltip(term, n)
            + (_first_uses(after, chosen, seen, tooltip, context) if after else [])
        )
    return [_text(text)] if text else []
