"""Problems a build can find, and how they are reported.

Every problem names the source file and a 1-based line, so an author can jump straight to it:
    content/attention.md:42: unknown widget option 'colour' [widget.option]
A build collects every problem it can before giving up, then exits 1 if any of them is an error. A warning
(e.g. a glossary synonym where the chosen term is expected) is printed the same way, with "warning: " before
the message, and never stops the build.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path


class Code(str, enum.Enum):
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
    TEMPLATE = "template"
    """A theme template failed to render."""
    ASSET = "asset"
    """A front-end asset could not be built or copied."""
    GLOSSARY = "glossary"
    """content/glossary.yml is malformed, or the prose uses a synonym where the glossary's term is expected."""


class Severity(str, enum.Enum):
    ERROR = "error"  # stops the build
    WARNING = "warning"  # printed, never stops the build


@dataclass(frozen=True)
class Problem:
    code: Code
    path: str  # project-relative, e.g. "content/attention.md"
    line: int | None  # 1-based; None when a whole file is concerned
    message: str
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        kind = "warning: " if self.severity is Severity.WARNING else ""
        return f"{where}: {kind}{self.message} [{self.code.value}]"


@dataclass
class Problems:
    """An ordered collection of problems found during one build. It is true when it holds an error (what stops
    a stage); warnings are kept alongside and only printed."""

    items: list[Problem] = field(default_factory=list)

    def add(self, code: Code, path: str | Path, line: int | None, message: str,
            severity: Severity = Severity.ERROR) -> None:
        self.items.append(Problem(code, str(path), line, message, severity))

    def warn(self, code: Code, path: str | Path, line: int | None, message: str) -> None:
        self.add(code, path, line, message, Severity.WARNING)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.items if p.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.items if p.severity is Severity.WARNING]

    def extend(self, other: "Problems") -> None:
        self.items.extend(other.items)

    def __bool__(self) -> bool:
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
