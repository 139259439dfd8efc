"""What a learner reads, taken from content/ without the build: a page's summary and Markdown body (quiz YAML and
code-cell comments included — both are on the page), a figure's text, the glossary's definitions.

Left out, because the reader never sees them as written: the front matter's other keys, widget option blocks
(```{widget} … ```), the `{data}` specs (the build replaces them with numbers), figure directives and the targets
of links and images (URLs and page file names).

And what the code shows: `code_texts()` — every Chinese string literal of the widgets (`widget.py`, `widget.js`:
titles, captions, notes, labels, live-region sentences), of what they show from attention_core (the examples' and
sentences' notes, the parameter-count presets), of the theme's scripts and of the code cells' frame. A string
with no Chinese character is taken for an identifier or a message to authors (the build's errors are English);
docstrings and the messages of `raise` are left out."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

from tests.conftest import ROOT

CONTENT = ROOT / "content"
PAGES = sorted(CONTENT.glob("*.md"))
FIGURES = sorted((CONTENT / "figures").glob("*.svg"))
SEEDS = Path("/work/shared/seeds")

FENCE_RE = re.compile(r"^```\{(\w[\w-]*)\}[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
DATA_RE = re.compile(r"\{data\}`[^`]*`")
LINK_TARGET_RE = re.compile(r"\]\([^)]*\)")
URL_RE = re.compile(r"https?://\S+")


def front_matter(path: Path) -> tuple[dict, str]:
    """(front matter, body) of a content page."""
    _, head, body = path.read_text(encoding="utf-8").split("---\n", 2)
    return yaml.safe_load(head), body


def page_text(path: Path, *, wrong_options: bool = True) -> str:
    """The page as the reader meets it, in reading order: the summary (shown under the title), then the body.
    Without `wrong_options`, a quiz keeps its question, right answers and explanation only: what the page teaches
    (a distractor states a misconception on purpose)."""
    meta, body = front_matter(path)

    def keep(m: re.Match) -> str:
        kind = m.group(1)
        if kind == "quiz" and not wrong_options:
            quiz = yaml.safe_load(m.group(2))
            right = [str(o["text"]) for o in quiz.get("options", []) if o.get("correct")]
            return "\n".join([str(quiz.get("question", "")), *right, str(quiz.get("explanation", ""))])
        if kind in ("quiz", "code-cell"):
            return m.group(2)
        if kind == "figure":  # the caption is read; the file name is not
            return "\n".join(line for line in m.group(2).splitlines() if line.startswith(("caption:", "alt:")))
        return ""  # widget options: configuration, not prose

    body = FENCE_RE.sub(keep, body)
    body = DATA_RE.sub("", body)
    body = LINK_TARGET_RE.sub("]", body)
    body = URL_RE.sub("", body)
    return f"{meta.get('summary', '')}\n{body}"


def figure_text(path: Path) -> str:
    """Every string a figure shows or says (<title>, <desc>, <text>), joined by spaces."""
    svg = path.read_text(encoding="utf-8")
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    return " ".join(t.strip() for t in re.findall(r">([^<>]+)<", svg) if t.strip())


def glossary() -> list[dict]:
    return yaml.safe_load((CONTENT / "glossary.yml").read_text(encoding="utf-8"))


def learner_texts(*, wrong_options: bool = True) -> list[tuple[str, str]]:
    """(name, text) of every page, figure and glossary definition."""
    texts = [(p.name, page_text(p, wrong_options=wrong_options)) for p in PAGES]
    texts += [(f"figures/{f.name}", figure_text(f)) for f in FIGURES]
    texts += [(f"glossary.yml: {t['term']}", t["definition"]) for t in glossary()]
    return texts


# ------------------------------------------------------------------------------ strings the code shows a learner

CJK_RE = re.compile(r"[\u4e00-\u9fff]")
CODE_FILES = sorted(
    [
        *(ROOT / "attention_course" / "widgets").glob("*/widget.py"),
        *(ROOT / "attention_course" / "widgets").glob("*/widget.js"),
        *(ROOT / "theme" / "js").rglob("*.js"),
        ROOT / "attention_core" / "examples.py",
        ROOT / "attention_core" / "models" / "sentences.py",
        ROOT / "attention_core" / "param_count.py",
        ROOT / "builder" / "cells" / "render.py",
    ]
)


def python_strings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string literal of a Python module but its docstrings and what it raises; an f-string
    is one text, its replacement fields written as …."""
    tree = ast.parse(source)
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                skip.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.Raise):
            skip.update(id(n) for n in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.JoinedStr):
            skip.update(id(n) for n in ast.walk(node) if n is not node)
            text = "".join(v.value if isinstance(v, ast.Constant) else "…" for v in node.values)
            found.append((node.lineno, text))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value))
    return found


REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^") | {""}


def js_strings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string and template literal of a script (a template's ${…} written as …, the strings
    inside it found too); comments and regular expression literals are skipped."""
    found: list[tuple[int, str]] = []
    n = len(source)

    def line(at: int) -> int:
        return source.count("\n", 0, at) + 1

    def code(i: int, closing: str | None) -> int:
        """Scan code from i to the `}` that closes a template's ${ (closing == "}") or to the end."""
        depth, prev = 0, ""
        while i < n:
            c = source[i]
            if source.startswith("//", i):
                i = source.find("\n", i)
                i = n if i < 0 else i
                continue
            if source.startswith("/*", i):
                i = source.find("*/", i + 2) + 2
                continue
            if c in "'\"":
                start, i, text = i, i + 1, []
                while i < n and source[i] != c:
                    if source[i] == "\\":
                        text.append(source[i : i + 2])
                        i += 2
                        continue
                    text.append(source[i])
                    i += 1
                found.append((line(start), "".join(text)))
                i, prev = i + 1, "a"
                continue
            if c == "`":
                i, prev = template(i + 1), "a"
                continue
            if c == "/" and prev in REGEX_BEFORE:  # a regular expression literal
                i += 1
                in_class = False
                while i < n and (source[i] != "/" or in_class):
                    if source[i] == "\\":
                        i += 1
                    elif source[i] == "[":
                        in_class = True
                    elif source[i] == "]":
                        in_class = False
                    i += 1
                i, prev = i + 1, "a"
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                if depth == 0 and closing == "}":
                    return i + 1
                depth -= 1
            if not c.isspace():
                prev = c if not (c.isalnum() or c in "_$)]") else "a"
                if c.isalpha():  # `return /re/` and `typeof /re/`: a keyword before a regular expression
                    word = re.match(r"[A-Za-z_$]+", source[i:]).group(0)
                    prev = "" if word in ("return", "typeof", "case", "in", "of") else "a"
                    i += len(word)
                    continue
            i += 1
        return i

    def template(i: int) -> int:
        start, text = i, []
        while i < n and source[i] != "`":
            if source[i] == "\\":
                text.append(source[i : i + 2])
                i += 2
            elif source.startswith("${", i):
                text.append("…")
                i = code(i + 2, "}")
            else:
                text.append(source[i])
                i += 1
        found.append((line(start), "".join(text)))
        return i + 1

    code(0, None)
    return found


TEMPLATES = sorted((ROOT / "theme" / "templates").rglob("*.html")) + [ROOT / "theme" / "strings.yml"]


def code_texts() -> list[tuple[str, str]]:
    """("path:line", text) of every string literal with a Chinese character in CODE_FILES, and of every line with
    one in the page templates (theme/templates) and the theme's words (theme/strings.yml)."""
    texts = []
    for path in CODE_FILES:
        source = path.read_text(encoding="utf-8")
        strings = python_strings(source) if path.suffix == ".py" else js_strings(source)
        rel = path.relative_to(ROOT)
        texts += [(f"{rel}:{n}", text) for n, text in strings if CJK_RE.search(text)]
    for path in TEMPLATES:
        rel = path.relative_to(ROOT)
        lines = path.read_text(encoding="utf-8").splitlines()
        texts += [(f"{rel}:{n}", text) for n, text in enumerate(lines, 1) if CJK_RE.search(text)]
    return texts
