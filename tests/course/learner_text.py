"""What a learner reads, taken from content/ without the build: a page's summary and Markdown body (quiz YAML and
code-cell comments included — both are on the page), a figure's text, the glossary's definitions.

Left out, because the reader never sees them as written: the front matter's other keys, widget option blocks
(```{widget} … ```), the `{data}` specs (the build replaces them with numbers), figure directives and the targets
of links and images (URLs and page file names)."""

from __future__ import annotations

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
