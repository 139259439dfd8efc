"""Problems a build can find, and how they are reported.

Every problem names the source file and a 1-based line, so an author can jump straight to it:
    content/module-05-attention.md:42: unknown widget option 'colour' [widget.option]
A build collects every problem it can before giving up, then exits 1 if any of them is an error. A warning
(e.g. a heading id that clashes and is renamed) is printed as `path:line: warning: message [code]` and does not
fail the build.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path


class Code(enum.StrEnum):
    """Error codes; the value is what is printed in brackets after a message."""

    FRONT_MATTER = "front-matter"
    """Front matter is not valid YAML, or a key/value breaks the schema."""
    DUPLICATE_SLUG = "slug.duplicate"
    """Two pages (or a page and a planned page) produce the same output file."""
    SITE_CONFIG = "site.config"
    """content/site.yml is missing, malformed or breaks its schema."""
    MATH = "math"
    """KaTeX rejected a formula."""
    LINK = "link"
    """An internal link points to a page or anchor that does not exist."""
    NAV = "nav"
    """prev/next names a page that does not exist."""
    HEADING = "heading"
    """A heading id clashes with an earlier one on the page (a warning: the later heading is renamed)."""
    DIRECTIVE = "directive"
    """An unknown ```{name} block."""
    CALLOUT = "callout"
    """Unknown callout kind."""
    FIGURE = "figure"
    """A figure's SVG is missing or unsafe/inaccessible."""
    WIDGET = "widget"
    """Unknown widget, unknown option or bad option value."""
    CELL = "cell"
    """A code cell raised at build time, or has a bad option."""
    QUIZ = "quiz"
    """Malformed quiz."""
    EXERCISE = "exercise"
    """A malformed exercise, a reference solution that fails a check, or a starter that passes every check."""
    TEMPLATE = "template"
    """A theme template failed to render."""
    HTML = "html"
    """Raw HTML breaks the policy: a script, an event handler, a `javascript:` URL, an element or attribute
    outside the allowlist, or a resource loaded from outside the site (docs/authoring.md)."""
    IMAGE = "image"
    """A Markdown image is missing, is not a local file inside content/, or points outside the site."""
    OUTPUT = "output"
    """The site could not be written (a full disk, no permission), or the output folder is one the build must not
    replace (its sources, a folder it did not make); the previous site is left as it was."""
    ASSET = "asset"
    """A front-end asset could not be built or copied."""
    DATA = "data"
    """A course's pinned data source (builder/data_sources.py) could not be fetched, or its bytes are not the
    declared ones."""
    GLOSSARY = "glossary"
    """content/glossary.yml is malformed, or the prose uses a synonym where the glossary's term is expected."""


@dataclass(frozen=True)
class Problem:
    code: Code
    path: str  # project-relative, e.g. "content/module-05-attention.md"
    line: int | None  # 1-based; None when a whole file is concerned
    message: str
    warning: bool = False  # printed, but does not fail the build

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {'warning: ' if self.warning else ''}{self.message} [{self.code.value}]"


@dataclass
class Problems:
    """An ordered collection of problems found during one build. It is true when it holds an error (what stops
    a stage); warnings are kept alongside and only printed."""

    items: list[Problem] = field(default_factory=list)

    def add(self, code: Code, path: str | Path, line: int | None, message: str) -> None:
        self.items.append(Problem(code, str(path), line, message))

    def warn(self, code: Code, path: str | Path, line: int | None, message: str) -> None:
        self.items.append(Problem(code, str(path), line, message, warning=True))

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.items if not p.warning]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.sorted() if p.warning]

    def extend(self, other: Problems) -> None:
        self.items.extend(other.items)

    def __bool__(self) -> bool:
        """True when there is an error (warnings alone do not stop a build)."""
        return bool(self.errors)

    def __len__(self) -> int:
        return len(self.items)

    def sorted(self) -> list[Problem]:
        return sorted(self.items, key=lambda p: (p.path, p.line or 0, p.message))


class AssetError(Exception):
    """A front-end asset (theme script, stylesheet, KaTeX, the Python runtime) could not be built or copied;
    reported as `path: message [asset]`."""

    def __init__(self, path: str, message: str):
        self.path = path
        super().__init__(message)


class BuildFailed(Exception):
    """Raised when a stage found errors; carries all of them."""

    def __init__(self, problems: Problems):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems.sorted()))

    @property
    def errors(self) -> int:
        return len(self.problems.errors)
