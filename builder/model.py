"""The typed objects the stages of the build pass to each other (the order of the stages: builder/pipeline.py).

    BuildOptions ─ load ─▶ SiteSource (SourcePage …) ─ parse ─▶ Page (tokens, PageFacts) ─ cells, math ─▶
    Page (+ cell outputs, typeset formulas) ─ render ─▶ Page (html) ─ links, assets, search, pages ─▶ files

Nothing here imports a stage: types live below the stages that use them (import-linter enforces it,
pyproject.toml). A `Page` complains when its HTML is read before the render stage has filled it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import Problem, Problems

if TYPE_CHECKING:
    from markdown_it.token import Token

DEFAULT_ROOT = Path(__file__).resolve().parent.parent
"""The repository root when none is given: the only place the build works it out (everything else reads
`BuildOptions.root`)."""

Formula = tuple[str, bool]
"""(TeX source, display mode): the key of a formula everywhere in the build."""


@dataclass(frozen=True)
class BuildOptions:
    root: Path = DEFAULT_ROOT
    content_dir: Path | None = None  # default: <root>/content
    theme_dir: Path | None = None  # default: <root>/theme
    out_dir: Path | None = None  # default: <root>/site
    cache_dir: Path | None = None  # None: no persistent cache (see `with_defaults`)
    pyodide_dir: Path | None = None  # a local official Pyodide distribution instead of node_modules/pyodide
    python_runtime: bool = True  # copy Pyodide into the site (tests of the pipeline may turn it off)
    jobs: int | None = None  # worker processes for rendering pages (None: all cores; 1: in-process)

    def __post_init__(self) -> None:
        # Frozen: fill the folder defaults from `root` once, so every stage reads complete options.
        for name, default in (("content_dir", "content"), ("theme_dir", "theme"), ("out_dir", "site")):
            if getattr(self, name) is None:
                object.__setattr__(self, name, self.root / default)

    @classmethod
    def with_defaults(cls, root: Path = DEFAULT_ROOT, **kwargs: Any) -> BuildOptions:
        """Options as the command line gives them: the persistent cache in <root>/.cache unless told otherwise."""
        kwargs.setdefault("cache_dir", root / ".cache")
        return cls(root=root, **kwargs)


# ------------------------------------------------------------------------------------------ content


@dataclass
class SourcePage:
    """A page as read from disk: validated metadata plus the Markdown body."""

    path: Path  # absolute
    rel: str  # path as printed in messages, e.g. "content/module-05-attention.md"
    meta: dict[str, Any]
    body: str
    body_line: int  # 0-based line of the file where `body` starts (after the front matter)

    @property
    def slug(self) -> str:
        return self.meta["slug"]

    @property
    def title(self) -> str:
        return self.meta["title"]

    @property
    def kind(self) -> str:
        return self.meta["kind"]

    @property
    def url(self) -> str:
        return f"{self.slug}.html"


@dataclass(frozen=True)
class PageKind:
    """A kind of page the site declares (content/site.yml `kinds:`): the index lists each kind's pages under
    `title` (with `lead` below it), in the order the kinds are declared. A `numbered` kind's pages carry a number
    (front matter `module:`), are listed by it and labelled `<label> 05`; the others by `order`, then title."""

    name: str
    title: str
    lead: str | None = None
    label: str | None = None
    numbered: bool = False


DEFAULT_KINDS = (PageKind("page", "全部页面"),)
"""The kinds of a site whose site.yml declares none: one list of pages."""


@dataclass(frozen=True)
class PlannedPage:
    """A page the course links to that is not written yet (shown as 即将推出)."""

    slug: str
    title: str
    kind: str
    module: int | None = None
    summary: str | None = None


@dataclass(frozen=True)
class GlossaryTerm:
    """One entry of content/glossary.yml: the chosen word, the words to avoid (and to search alike), its English
    name, a one-line definition, and the entry's 1-based line."""

    term: str
    synonyms: tuple[str, ...]
    english: str
    definition: str
    line: int = 0


@dataclass
class SiteSource:
    root: Path  # project root (for relative paths in messages)
    content_dir: Path
    series: str
    title: str
    pages: list[SourcePage] = field(default_factory=list)
    planned: list[PlannedPage] = field(default_factory=list)
    glossary: list[GlossaryTerm] = field(default_factory=list)
    kinds: tuple[PageKind, ...] = DEFAULT_KINDS
    strings: dict[str, str] = field(default_factory=dict)  # site.yml `strings:`: the theme's UI words replaced

    def kind(self, name: str) -> PageKind | None:
        return next((k for k in self.kinds if k.name == name), None)

    def page(self, slug: str) -> SourcePage | None:
        return next((p for p in self.pages if p.slug == slug), None)

    def planned_page(self, slug: str) -> PlannedPage | None:
        return next((p for p in self.planned if p.slug == slug), None)

    @property
    def planned_slugs(self) -> set[str]:
        return {p.slug for p in self.planned}


# ------------------------------------------------------------------------------------------ code cells

CELL_PREFIX = "<cell-"
"""Start of a cell's file name in tracebacks (`<cell-qkv>`): frames of user cells are the ones kept."""


@dataclass
class CellOutput:
    """What one cell printed and returned; `chunks` keeps stdout/stderr interleaved in order."""

    chunks: list[tuple[str, str]] = field(default_factory=list)  # (stream, text), stream ∈ {stdout, stderr}
    repr: str | None = None
    error: dict | None = None  # {type, message, traceback, line}
    truncated: bool = False
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {
            "chunks": [list(c) for c in self.chunks],
            "repr": self.repr,
            "error": self.error,
            "truncated": self.truncated,
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, data: dict) -> CellOutput:
        return cls(
            chunks=[(s, t) for s, t in data.get("chunks", [])],
            repr=data.get("repr"),
            error=data.get("error"),
            truncated=bool(data.get("truncated")),
            seconds=float(data.get("seconds", 0.0)),
        )


@dataclass
class Cell:
    token: Token
    id: str
    code: str
    code_offset: int  # lines from the fence line to the first line of code (1 + number of option lines)
    hide: bool = False
    expect_error: bool = False
    readonly: bool = False
    browser_only: bool = False  # runs only when the reader runs it (a minutes-long training): the build skips it
    output: CellOutput | None = None

    @property
    def filename(self) -> str:
        return f"{CELL_PREFIX}{self.id}>"

    @property
    def element_id(self) -> str:
        """The HTML id (a link target): prefixed, because authors reuse a section's id for its cell."""
        return self.id if self.id.startswith("cell-") else f"cell-{self.id}"

    @property
    def source_hash(self) -> str:
        return hashlib.sha256(self.code.encode("utf-8")).hexdigest()[:16]


@dataclass
class Exercise:
    """An exercise block (builder/markdown/exercise.py): the learner's starting code, the checks they can read,
    the hidden checks, the reference solution; `lines` holds each part's first line as lines from the fence line.
    The build checks it (builder/exercises/verify.py): `solution` passes every check, `starter` fails one."""

    token: Token
    id: str
    starter: str
    checks: str
    hidden: str
    solution: str
    lines: dict[str, int] = field(default_factory=dict)  # part → lines from the fence line to its first code line
    defines: tuple[str, ...] = ()  # names the learner's passing code hands to the page's cells (`:defines:`)
    uses: tuple[str, ...] = ()  # names the exercises above hand to the page: this one's code sees them too

    @property
    def element_id(self) -> str:
        return f"exercise-{self.id}"


# ------------------------------------------------------------------------------------------ pages


@dataclass(frozen=True)
class Heading:
    level: int
    id: str
    text: str
    line: int  # 0-based line in the page body


@dataclass(frozen=True)
class Link:
    """An internal link (no scheme): `page.html`, `page.html#anchor` or `#anchor`."""

    href: str  # as markdown-it normalised it (percent-encoded)
    line: int  # 0-based line in the page body


SearchSection = tuple[str, str, str, tuple[str, ...], tuple[str, ...]]
"""(heading, anchor id, plain text, CJK grams, Latin words): one section of a page in the search index."""


@dataclass(frozen=True)
class QuizAnswer:
    """Where a quiz shows its right answers (builder/markdown/quiz.py): for the site-wide balance check."""

    id: str
    line: int  # 0-based body line of the quiz's fence
    n_options: int
    positions: tuple[int, ...]  # 0 = the first option on screen


@dataclass
class PageFacts:
    """What the stages learn about a page and later stages need: gathered while parsing (headings, links,
    formulas, features, quiz ids, anchors of widgets/cells/quizzes) and rendering (search sections, reading
    time). Cached with the page's HTML, so a cache hit needs no parse (builder/pipeline.py)."""

    headings: list[Heading] = field(default_factory=list)
    extra_ids: set[str] = field(default_factory=set)  # anchors that are not headings: widgets, quizzes, cells
    links: list[Link] = field(default_factory=list)
    formulas: list[tuple[Formula, int]] = field(default_factory=list)  # (formula, 0-based body line)
    features: set[str] = field(
        default_factory=set
    )  # "cells", "quiz", "widgets", "widget-<name>", "css-widgets-<sheet>"
    quiz_ids: list[str] = field(default_factory=list)
    quiz_answers: list[QuizAnswer] = field(default_factory=list)  # where each quiz shows its right answers
    exercise_ids: list[str] = field(default_factory=list)
    images: dict[str, str] = field(default_factory=dict)  # output file ("assets/images/x-1a2b3c4d5e.png") → source file
    search_sections: list[SearchSection] | None = None  # None for the index page (not searched)
    reading_minutes: int | None = None
    files: dict[str, bytes] = field(default_factory=dict)  # site files the page's widgets made (lazily loaded data)

    @property
    def heading_ids(self) -> set[str]:
        return {h.id for h in self.headings}

    @property
    def anchors(self) -> set[str]:
        return self.heading_ids | self.extra_ids


@dataclass
class ParseContext:
    """The markdown-it `env` of one page: where its messages go and what its plugins fill. Plugins reach it
    with `parse_context(env)`; it is the only thing the env holds."""

    rel: str  # the page's path as printed in messages
    line_offset: int  # 0-based file line of the body's first line
    problems: Problems
    planned_slugs: set[str] = field(default_factory=set)
    facts: PageFacts = field(default_factory=PageFacts)
    math_html: dict[Formula, str] = field(default_factory=dict)  # filled by the math stage, read when rendering
    scratch: dict[str, Any] = field(default_factory=dict)  # per-parse counters of plugins (widget numbers, …)
    cells: list[Cell | None] = field(default_factory=list)  # the page's code cells (None: one with bad options)
    exercises: list[Exercise] = field(default_factory=list)  # the page's well-formed exercise blocks
    strings: dict[str, str] = field(default_factory=dict)  # the theme's words (theme/strings.yml + site.yml)

    def env(self) -> dict[str, Any]:
        return {ENV_KEY: self}


ENV_KEY = "page"


def parse_context(env: dict[str, Any]) -> ParseContext:
    return env[ENV_KEY]


@dataclass
class Page:
    """One page travelling through the stages: `tokens` after parsing (empty when restored from the page
    cache), `html` once rendered, `key` its page-cache key (every input of its body)."""

    source: SourcePage
    facts: PageFacts
    tokens: list[Token] = field(default_factory=list)
    context: ParseContext | None = None  # while the body stages run; dropped afterwards
    html: str | None = None
    key: str = ""

    @property
    def body_html(self) -> str:
        if self.html is None:
            raise RuntimeError(f"{self.source.rel}: page used before it was rendered")
        return self.html

    @property
    def features(self) -> set[str]:
        return self.facts.features


@dataclass
class BuildResult:
    pages: int
    formulas: int
    formulas_rendered: int
    seconds: float
    out_dir: Path
    files: dict[str, bytes] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)  # printed by the CLI; they never fail a build

    def summary(self) -> str:
        return (
            f"built {self.pages} pages, {self.formulas} formulas ({self.formulas_rendered} typeset, rest cached) "
            f"in {self.seconds:.2f} s → {self.out_dir}"
        )
