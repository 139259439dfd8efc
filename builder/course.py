"""The course a site is built from: what a course package adds to the engine.

`site.yml` names a Python package (`course: attention_course`); its `setup(course)` registers, on the `Course` it
is given, what the engine cannot know by itself (as Sphinx's `setup(app)` does):

- widget kinds: `add_widgets(folder)`, one sub-folder per kind holding `widget.py` (its `WIDGET`), `widget.js`
  (`mount(root, data)`), optionally `style.css` (builder/assets.py) and `fixture.md` (tests/widget_fixtures.py);
- option kinds for widget options beyond the engine's own (`add_option_kind`);
- Markdown plugins (`add_markdown_plugin`, in the mdit-py-plugins shape);
- the Python packages the browser's runtime and the build-time cells import (`add_browser_package`);
- names a code cell may call to show a widget (`add_cell_widget("show_attention", "heatmap")`);
- data sources: what its widgets read that is not in the repository (`add_data_source`, builder/data_sources.py):
  pinned files (a model, a corpus), fetched before the pages are parsed, and stores of what the course derives from
  them; `--help` lists them with where they live.

The package is looked up with the content folder first on `sys.path`, so a small course can live beside its pages
(examples/minimal/). The engine imports nothing of a course by name (import-linter, pyproject.toml).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from .data_sources import DataSource
from .errors import Code, Problem


class CourseError(Exception):
    """The course package named by site.yml cannot be loaded: a `Problem` at site.yml's `course:` line."""

    def __init__(self, problem: Problem):
        super().__init__(str(problem))
        self.problem = problem


@dataclass
class Course:
    """Everything a course adds, filled by its `setup(course)`; an empty course has no widgets and no packages."""

    name: str = ""
    root: Path | None = None  # the package's folder (its code is part of every page's cache key)
    widget_folders: dict[str, Path] = field(default_factory=dict)  # widget name → its folder
    widgets: dict[str, Any] = field(default_factory=dict)  # widget name → its `Widget` (builder/widgets/schema.py)
    option_kinds: dict[str, Callable[..., Any]] = field(default_factory=dict)
    markdown_plugins: list[Callable[..., None]] = field(default_factory=list)
    browser_packages: list[Path] = field(default_factory=list)  # package folders (their name is the import name)
    # folder → data(options): files made at build time that the package ships beside its modules
    browser_package_data: dict[Path, Callable[[Any], dict[str, bytes]]] = field(default_factory=dict)
    cell_widgets: dict[str, str] = field(default_factory=dict)  # function a cell calls → widget kind it shows
    data_sources: list[DataSource] = field(default_factory=list)

    # -------------------------------------------------------------------------------------- what setup() calls

    def add_widgets(self, folder: Path, package: str | None = None) -> None:
        """Every sub-folder of `folder` with a `widget.py` is one widget kind. `package`: the dotted name of
        `folder` when it is importable (its widget modules then import as `<package>.<sub>.widget`)."""
        for sub in sorted(p for p in Path(folder).iterdir() if (p / "widget.py").is_file()):
            module = _import_widget(sub, f"{package}.{sub.name}.widget" if package else None)
            widget = getattr(module, "WIDGET", None)
            if widget is None:
                raise TypeError(f"{sub / 'widget.py'} defines no WIDGET")
            if widget.name in self.widgets:
                raise ValueError(
                    f"two widget kinds are called {widget.name!r}: {self.widget_folders[widget.name]}, {sub}"
                )
            self.widgets[widget.name] = widget
            self.widget_folders[widget.name] = sub

    def add_option_kind(self, name: str, check: Callable[..., Any]) -> None:
        """`check(name, value, option)` → the value to use, or raises builder.widgets.OptionError."""
        self.option_kinds[name] = check

    def add_markdown_plugin(self, plugin: Callable[..., None]) -> None:
        self.markdown_plugins.append(plugin)

    def add_browser_package(self, folder: Path, data: Callable[[Any], dict[str, bytes]] | None = None) -> None:
        """A pure-Python package the browser's Python (and the build's cells) can import. `data(options)`, when
        given, makes files at build time (from a data source, say) that ship in the package beside its modules:
        {path inside the package: bytes}; the package reads them with importlib.resources."""
        path = Path(folder).resolve()
        self.browser_packages.append(path)
        if data is not None:
            self.browser_package_data[path] = data

    def add_cell_widget(self, function: str, widget: str) -> None:
        self.cell_widgets[function] = widget

    def add_data_source(self, source: DataSource) -> None:
        """A `PinnedFile` or a `DerivedStore` (builder/data_sources.py); names are unique."""
        if any(known.name == source.name for known in self.data_sources):
            raise ValueError(f"two data sources are called {source.name!r}")
        self.data_sources.append(source)

    # -------------------------------------------------------------------------------------- what the engine reads

    def browser_package_files(self, options: Any) -> dict[Path, dict[str, bytes]]:
        """The files the build makes for the browser packages (`add_browser_package(…, data=)`), by folder."""
        return {folder: make(options) for folder, make in self.browser_package_data.items()}

    def code_paths(self) -> list[Path]:
        """The folders whose code decides the pages' output: the course package and the browser packages."""
        return [p for p in [self.root, *self.browser_packages] if p is not None]

    def stylesheets(self, kinds: set[str]) -> list[str]:
        """The widget kinds whose `style.css` a page with these kinds links, in cascade order: a kind's
        `Widget.styles` (kinds whose rules it builds on) before the kind itself."""
        order: list[str] = []

        def visit(kind: str) -> None:
            widget = self.widgets.get(kind)
            if widget is None or kind in order:
                return
            for used in widget.styles:
                visit(used)
            if (self.widget_folders[kind] / "style.css").is_file():
                order.append(kind)

        for kind in sorted(kinds):
            visit(kind)
        return order


def _import_widget(folder: Path, dotted: str | None) -> Any:
    if dotted is not None:
        return importlib.import_module(dotted)
    name = f"_course_widget_{folder.name}"  # a course that is not a package on sys.path (a test's folder)
    spec = importlib.util.spec_from_file_location(name, folder / "widget.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def course_name(content_dir: Path) -> tuple[str | None, int | None]:
    """(the `course:` of content/site.yml, its 1-based line), or (None, None) when it names none."""
    try:
        node = yaml.compose((content_dir / "site.yml").read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None, None  # the load stage reports the file itself
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == "course" and isinstance(value, yaml.ScalarNode):
                return value.value, key.start_mark.line + 1
    return None, None


def _forget_elsewhere(name: str, folder: Path) -> None:
    """A course package beside these pages that this process imported from another folder before (the same
    project moved or copied, a second content folder in one long-lived process) is imported again from here."""
    top = name.split(".")[0]
    loaded = sys.modules.get(top)
    here = folder / top
    if loaded is None or not (here.is_dir() or here.with_suffix(".py").is_file()):
        return
    file = getattr(loaded, "__file__", None)
    if file and not Path(file).resolve().is_relative_to(folder):
        for module in [m for m in sys.modules if m == top or m.startswith(top + ".")]:
            del sys.modules[module]


@lru_cache(maxsize=8)
def load_course(content_dir: Path, root: Path) -> Course:
    """The course named by `<content_dir>/site.yml` with its `setup` run once per process; raises CourseError."""
    name, line = course_name(content_dir)
    if not name:
        return Course()
    try:
        rel = str((content_dir / "site.yml").resolve().relative_to(root.resolve()))
    except ValueError:
        rel = str(content_dir / "site.yml")

    def fail(message: str) -> CourseError:
        return CourseError(Problem(Code.SITE_CONFIG, rel, line, message))

    folder = str(content_dir.resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    _forget_elsewhere(name, content_dir.resolve())
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise fail(
                f"course: no Python package '{name}' (looked in {content_dir} and the installed packages)"
            ) from None
        raise fail(f"course: '{name}' cannot be imported: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the course's own error, shown as a build problem
        raise fail(f"course: '{name}' failed while importing: {type(exc).__name__}: {exc}") from None
    setup = getattr(module, "setup", None)
    if not callable(setup):
        raise fail(f"course: '{name}' has no setup(course) function")
    course = Course(name=name, root=Path(module.__file__).resolve().parent)
    try:
        setup(course)
    except Exception as exc:  # noqa: BLE001
        raise fail(f"course: {name}.setup() failed: {type(exc).__name__}: {exc}") from None
    return course
