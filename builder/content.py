"""Stage: load — content: `content/site.yml` and every `content/*.md` page with its front matter.

Front matter is validated against a declared schema; each problem names `file:line` of the offending key.
"""

from __future__ import annotations

import copy
import dataclasses
import errno
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from .errors import Code, Problems
from .model import DEFAULT_KINDS, GlossaryTerm, PageKind, PlannedPage, SiteSource, SourcePage
from .source_text import SourceTextError, control_characters, control_name, outside_folder, read_text
from .strict_yaml import FastStrictLoader, StrictLoader, compose_and_load

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def _is_str(v: Any) -> bool:
    return isinstance(v, str) and v.strip() != ""


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_slug(v: Any) -> bool:
    return isinstance(v, str) and bool(SLUG_RE.match(v))


def _is_module_name(v: Any) -> bool:
    return isinstance(v, str) and all(part.isidentifier() for part in v.split("."))


def _is_str_list(v: Any) -> bool:
    return isinstance(v, list) and all(_is_str(x) for x in v)


# key -> (check, human description of the expected value)
FRONT_MATTER_SCHEMA: dict[str, tuple[Callable[[Any], bool], str]] = {
    "title": (_is_str, "a non-empty string"),
    "slug": (_is_slug, "lowercase letters, digits and '-'"),
    "kind": (_is_slug, "`index` or a kind content/site.yml declares"),
    "module": (lambda v: _is_int(v) and v >= 0, "a non-negative integer"),
    "minutes": (lambda v: _is_int(v) and v > 0, "a positive integer"),
    "tags": (_is_str_list, "a list of strings"),
    "summary": (_is_str, "a non-empty string"),
    "prev": (_is_slug, "a page slug"),
    "next": (_is_slug, "a page slug"),
    "order": (_is_int, "an integer"),
}

PLANNED_SCHEMA: dict[str, tuple[Callable[[Any], bool], str]] = {
    "slug": FRONT_MATTER_SCHEMA["slug"],
    "title": FRONT_MATTER_SCHEMA["title"],
    "kind": FRONT_MATTER_SCHEMA["kind"],
    "module": FRONT_MATTER_SCHEMA["module"],
    "summary": FRONT_MATTER_SCHEMA["summary"],
}


def rel_path(path: Path, root: Path) -> str:
    try:  # the folder resolved, not the file: a page may be a (broken, looping) symbolic link
        return str((path.parent.resolve() / path.name).relative_to(root.resolve()))
    except ValueError:
        return str(path)


# libyaml (C) is ~10× faster than the pure-Python loader. Its error messages are worded differently, so a
# document it rejects is parsed again by the pure-Python loader, whose message is the one reported. Both refuse a
# key given twice (builder/strict_yaml.py).


def _compose_and_construct(text: str, loader_class: Any = None) -> tuple[Any, Any]:
    """(node tree, Python data) of one YAML document, parsed once: the node keeps every key's line."""
    loader_class = loader_class or FastStrictLoader
    try:
        return compose_and_load(text, loader_class)
    except yaml.YAMLError:
        if loader_class is StrictLoader:
            raise
        return _compose_and_construct(text, StrictLoader)


def _yaml_mapping(text: str, rel: str, line_offset: int, problems: Problems) -> tuple[dict, dict[str, int]] | None:
    """Parse YAML text into a dict, returning also the 1-based file line of every top-level key."""
    try:
        node, data = _compose_and_construct(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = line_offset + mark.line + 1 if mark else line_offset + 1
        problem = getattr(exc, "problem", None) or str(exc)
        problems.add(Code.FRONT_MATTER, rel, line, f"invalid YAML: {problem}")
        return None
    if data is None:
        return {}, {}
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        problems.add(Code.FRONT_MATTER, rel, line_offset + 1, "expected a mapping of `key: value` lines")
        return None
    lines = {k.value: line_offset + k.start_mark.line + 1 for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
    return data, lines


def validate_mapping(
    data: dict,
    lines: dict[str, int],
    schema: dict[str, tuple[Callable[[Any], bool], str]],
    *,
    rel: str,
    default_line: int,
    code: Code,
    problems: Problems,
    what: str,
) -> bool:
    ok = True
    for key, value in data.items():
        line = lines.get(str(key), default_line)
        if key not in schema:
            allowed = ", ".join(schema)
            problems.add(code, rel, line, f"unknown {what} key '{key}' (allowed: {allowed})")
            ok = False
            continue
        check, expected = schema[key]
        if not check(value):
            problems.add(code, rel, line, f"{what} key '{key}' must be {expected}, got {value!r}")
            ok = False
    return ok


def split_front_matter(text: str) -> tuple[str | None, str, int]:
    """Return (front matter YAML or None, body, 0-based line where body starts)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None, text, 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :]), i + 1
    return "\n".join(lines[1:]), "", len(lines)  # unterminated: reported by the caller


# (path, root, file text) → the page loaded from it without problems, for a long-lived process (the authoring
# server): a rebuild after one edit re-parses only the edited page's front matter.
_loaded_pages: dict[tuple[str, str, str], SourcePage] = {}
_LOADED_PAGES_LIMIT = 10_000


def read_content_file(path: Path, content_dir: Path, root: Path, code: Code, problems: Problems) -> str | None:
    """The text of a file of the content folder, or None with its problem reported: a file outside the content
    folder (a symbolic link out of it) is refused, and one that is not UTF-8 names the line of its first bad byte."""
    real = outside_folder(path, content_dir)
    if real is not None:
        problems.add(code, rel_path(path, root), None, outside_message(real, content_dir, root))
        return None
    try:
        return read_text(path)
    except SourceTextError as exc:
        problems.add(code, rel_path(path, root), exc.line, exc.message)
        return None


def outside_message(real: Path, content_dir: Path, root: Path) -> str:
    return (
        f"it is a symbolic link to {real}, outside the content folder {rel_path(content_dir, root)}/: the build "
        "reads only files inside it (copy the file in instead)"
    )


def unreadable(path: Path) -> str | None:
    """Why `path` (a `*.md` name in content/) is not a readable page file, or None."""
    if path.is_symlink() and not path.exists():
        try:
            path.resolve(strict=True)
        except RuntimeError:
            return "a symbolic link that loops"
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return "a symbolic link that loops"
        return "a symbolic link to a file that does not exist"
    if path.is_dir():
        return "a folder, not a page file"
    return None


def intended_slug(path: Path) -> str:
    """The slug a page that failed to load meant to have (its front matter's `slug`, else its file name)."""
    try:
        fm, _, _ = split_front_matter(path.read_text(encoding="utf-8").removeprefix("\ufeff"))
        slug = yaml.load(fm, Loader=yaml.SafeLoader).get("slug") if fm else None  # noqa: S506 - the safe loader
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError):
        slug = None
    return slug if isinstance(slug, str) else path.stem


def load_page(path: Path, root: Path, problems: Problems) -> SourcePage | None:
    """The page at `path`, or None with its problems reported: the one loader of the build and of the server."""
    reason = unreadable(path)
    if reason is not None:
        problems.add(Code.FRONT_MATTER, rel_path(path, root), None, f"cannot read the page: it is {reason}")
        return None
    real = outside_folder(path, path.parent)
    if real is not None:
        message = outside_message(real, path.parent, root)
        problems.add(Code.FRONT_MATTER, rel_path(path, root), None, f"cannot read the page: {message}")
        return None
    try:
        text = read_text(path)
    except SourceTextError as exc:
        problems.add(Code.FRONT_MATTER, rel_path(path, root), exc.line, exc.message)
        return None
    memo_key = (str(path), str(root), text)
    known = _loaded_pages.get(memo_key)
    if known is not None:  # a copy: later stages must not change the remembered page
        return dataclasses.replace(known, meta=copy.deepcopy(known.meta))
    before = len(problems)
    page = _parse_page(path, root, text, problems)
    if page is not None and len(problems) == before:
        if len(_loaded_pages) >= _LOADED_PAGES_LIMIT:
            _loaded_pages.clear()
        _loaded_pages[memo_key] = dataclasses.replace(page, meta=copy.deepcopy(page.meta))
    return page


def _parse_page(path: Path, root: Path, text: str, problems: Problems) -> SourcePage | None:
    rel = rel_path(path, root)
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")  # a byte-order mark (Windows editors) is not content
    controls = control_characters(text)
    for line, column, char in controls[:3]:
        problems.add(
            Code.FRONT_MATTER,
            rel,
            line,
            f"control character {control_name(char)} at column {column}: no editor shows it and HTML forbids it; "
            "delete it",
        )
    if controls:
        return None
    fm, body, body_line = split_front_matter(text)
    if fm is None:
        problems.add(Code.FRONT_MATTER, rel, 1, "missing front matter: a page starts with `---`, YAML, `---`")
        return None
    if body_line == len(text.split("\n")) and not text.rstrip().endswith(("---", "...")):
        problems.add(Code.FRONT_MATTER, rel, 1, "front matter is not closed by a `---` line")
        return None
    parsed = _yaml_mapping(fm, rel, 1, problems)
    if parsed is None:
        return None
    data, lines = parsed
    ok = validate_mapping(
        data,
        lines,
        FRONT_MATTER_SCHEMA,
        rel=rel,
        default_line=1,
        code=Code.FRONT_MATTER,
        problems=problems,
        what="front-matter",
    )
    if "title" not in data:
        problems.add(Code.FRONT_MATTER, rel, 1, "front matter has no 'title' (required)")
        ok = False
    if not ok:
        return None
    meta = dict(data)
    meta.setdefault("slug", path.stem)
    if meta["slug"] == "index":
        meta.setdefault("kind", "index")  # the other pages' default depends on site.yml (load_site)
    meta.setdefault("tags", [])
    meta["_lines"] = lines
    if not _is_slug(meta["slug"]):
        problems.add(
            Code.FRONT_MATTER,
            rel,
            1,
            f"file name gives slug '{meta['slug']}': set `slug:` to lowercase letters, digits and '-'",
        )
        return None
    return SourcePage(path=path, rel=rel, meta=meta, body=body, body_line=body_line)


GLOSSARY_KEYS = ("term", "synonyms", "english", "definition")


def load_glossary(content_dir: Path, root: Path, problems: Problems) -> list[GlossaryTerm]:
    """content/glossary.yml (optional): a list of {term, synonyms, english, definition}; bad entries are errors."""
    path = content_dir / "glossary.yml"
    if not path.exists():
        return []
    rel = rel_path(path, root)
    text = read_content_file(path, content_dir, root, Code.GLOSSARY, problems)
    if text is None:
        return []
    try:
        node, data = compose_and_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problems.add(Code.GLOSSARY, rel, mark.line + 1 if mark else None, f"not valid YAML: {exc}")
        return []
    if not isinstance(data, list) or not isinstance(node, yaml.SequenceNode):
        problems.add(Code.GLOSSARY, rel, 1, "the glossary is a list of `- term: …` entries")
        return []
    terms: list[GlossaryTerm] = []
    seen: dict[str, int] = {}
    for entry, item in zip(data, node.value):
        line = item.start_mark.line + 1
        if (
            not isinstance(entry, dict)
            or set(entry) - set(GLOSSARY_KEYS)
            or not isinstance(entry.get("term"), str)
            or not isinstance(entry.get("definition"), str)
            or not all(isinstance(x, str) for x in entry.get("synonyms") or [])
        ):
            problems.add(
                Code.GLOSSARY,
                rel,
                line,
                f"an entry has the keys {', '.join(GLOSSARY_KEYS)} (term and "
                "definition text, synonyms a list of words)",
            )
            continue
        words = [entry["term"], *(entry.get("synonyms") or [])]
        for word in words:
            if word in seen:
                problems.add(Code.GLOSSARY, rel, line, f"'{word}' is already in the glossary (line {seen[word]})")
            seen[word] = line
        terms.append(
            GlossaryTerm(
                entry["term"],
                tuple(entry.get("synonyms") or ()),
                str(entry.get("english") or ""),
                entry["definition"],
                line,
            )
        )
    return terms


KIND_KEYS = {"title": _is_str, "lead": _is_str, "label": _is_str, "numbered": lambda v: isinstance(v, bool)}


def _page_kinds(data: dict, rel: str, line: int, problems: Problems) -> tuple[PageKind, ...]:
    """site.yml `kinds:` → the declared kinds, in order (problems at the `kinds:` line)."""
    kinds = []
    for name, spec in data.items():
        if not _is_slug(name) or name == "index":
            problems.add(Code.SITE_CONFIG, rel, line, f"kinds: '{name}' is not a kind name (lowercase, not index)")
            continue
        if not isinstance(spec, dict) or "title" not in spec:
            problems.add(Code.SITE_CONFIG, rel, line, f"kinds: '{name}' needs at least a `title:` (its index heading)")
            continue
        bad = [k for k, v in spec.items() if k not in KIND_KEYS or not KIND_KEYS[k](v)]
        if bad:
            problems.add(
                Code.SITE_CONFIG,
                rel,
                line,
                f"kinds: '{name}': bad key(s) {', '.join(map(str, bad))} "
                "(title, lead, label: text; numbered: true/false)",
            )
            continue
        kinds.append(PageKind(name, spec["title"], spec.get("lead"), spec.get("label"), bool(spec.get("numbered"))))
    return tuple(kinds)


def _check_kind(page: SourcePage, site: SiteSource, problems: Problems) -> None:
    """A page's kind is `index` or one site.yml declares; a page of a numbered kind has its number (`module:`)."""
    lines = page.meta["_lines"]
    if "kind" not in page.meta:  # the first kind that is not numbered: a page of its own, not a step of a path
        default = next((k for k in site.kinds if not k.numbered), None)
        if default is None:
            names = ", ".join(k.name for k in site.kinds)
            problems.add(Code.FRONT_MATTER, page.rel, 1, f"front matter needs `kind:` (one of index, {names})")
            default = site.kinds[0]
        page.meta["kind"] = default.name
        return
    kind = page.meta["kind"]
    if kind == "index":
        return
    declared = site.kind(kind)
    if declared is None:
        names = ", ".join(k.name for k in site.kinds)
        problems.add(
            Code.FRONT_MATTER,
            page.rel,
            lines.get("kind", 1),
            f"unknown page kind '{kind}' (index, or a kind content/site.yml declares: {names})",
        )
    elif declared.numbered and "module" not in page.meta:
        problems.add(
            Code.FRONT_MATTER,
            page.rel,
            lines.get("kind", 1),
            f"a '{kind}' page has a number: add `module: <n>` to its front matter",
        )
    elif not declared.numbered and "module" in page.meta:
        problems.add(
            Code.FRONT_MATTER,
            page.rel,
            lines.get("module", 1),
            f"`module:` numbers pages of a numbered kind; '{kind}' is not one",
        )


def load_site(content_dir: Path, root: Path, problems: Problems) -> SiteSource:
    """Read site.yml and all pages; problems are collected, never raised."""
    site_file = content_dir / "site.yml"
    site_rel = rel_path(site_file, root)
    before_site = len(problems)
    series, title, planned, kinds, strings = "", "", [], DEFAULT_KINDS, {}
    if not content_dir.is_dir():
        what = "it is a file, not a folder" if content_dir.exists() else "no such folder"
        problems.add(
            Code.SITE_CONFIG,
            rel_path(content_dir, root),
            None,
            f"the content folder: {what} (--content names the folder holding site.yml and the pages)",
        )
        return SiteSource(root=root, content_dir=content_dir, series="", title="")
    if not site_file.exists():
        problems.add(
            Code.SITE_CONFIG,
            site_rel,
            None,
            "missing: every content folder needs a site.yml, the course's settings; each of its keys is optional "
            "(`series:`, `title:`, `course:`, `kinds:`, `planned:`, `strings:`), so an empty file will do "
            '(docs/authoring.md, "content/site.yml")',
        )
    else:
        site_text = read_content_file(site_file, content_dir, root, Code.SITE_CONFIG, problems)
        parsed = _yaml_mapping(site_text, site_rel, 0, problems) if site_text is not None else None
        if parsed is not None:
            data, lines = parsed
            schema = {
                "series": (_is_str, "a non-empty string"),
                "title": (_is_str, "a non-empty string"),
                "course": (_is_module_name, "a Python package name, e.g. attention_course"),
                "kinds": (
                    lambda v: isinstance(v, dict) and bool(v),
                    "a mapping of kind names to {title, lead, label, numbered}",
                ),
                "strings": (
                    lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
                    "a mapping of the theme's UI string names to text",
                ),
                "planned": (
                    lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v),
                    "a list of mappings",
                ),
            }
            if validate_mapping(
                data,
                lines,
                schema,
                rel=site_rel,
                default_line=1,
                code=Code.SITE_CONFIG,
                problems=problems,
                what="site.yml",
            ):
                series = data.get("series", "")
                title = data.get("title", series)
                strings = dict(data.get("strings") or {})
                if "kinds" in data:
                    kinds = _page_kinds(data["kinds"], site_rel, lines.get("kinds", 1), problems) or DEFAULT_KINDS
                base_line = lines.get("planned", 1)
                for i, entry in enumerate(data.get("planned") or []):
                    line = base_line + i + 1
                    if validate_mapping(
                        entry,
                        {},
                        PLANNED_SCHEMA,
                        rel=site_rel,
                        default_line=line,
                        code=Code.SITE_CONFIG,
                        problems=problems,
                        what="planned-page",
                    ):
                        if "slug" not in entry or "title" not in entry:
                            problems.add(Code.SITE_CONFIG, site_rel, line, "a planned page needs `slug` and `title`")
                            continue
                        planned.append(
                            PlannedPage(
                                entry["slug"],
                                entry["title"],
                                entry.get("kind", next((k.name for k in kinds if not k.numbered), kinds[0].name)),
                                entry.get("module"),
                                entry.get("summary"),
                            )
                        )
    site_failed = len(problems) > before_site
    site = SiteSource(
        root=root,
        content_dir=content_dir,
        series=series,
        title=title,
        planned=planned,
        glossary=load_glossary(content_dir, root, problems),
        kinds=kinds,
        strings=strings,
    )
    unloaded: set[str] = set()  # slugs of pages that failed to load: reported once, not again as dead prev/next
    for path in sorted(content_dir.glob("*.md")):
        page = load_page(path, root, problems)
        if page is not None:
            site.pages.append(page)
        else:
            unloaded |= {path.stem, intended_slug(path)}

    for page in site.pages:
        _check_kind(page, site, problems)
    for plan in site.planned:
        if plan.kind != "index" and site.kind(plan.kind) is None and not site_failed:
            problems.add(Code.SITE_CONFIG, site_rel, None, f"planned page '{plan.slug}': unknown kind '{plan.kind}'")

    seen: dict[str, str] = {}
    for page in site.pages:
        if page.slug in seen:
            line = page.meta["_lines"].get("slug", 1)
            problems.add(
                Code.DUPLICATE_SLUG, page.rel, line, f"slug '{page.slug}' is already used by {seen[page.slug]}"
            )
        else:
            seen[page.slug] = page.rel
    for plan in site.planned:
        if plan.slug in seen:
            problems.add(
                Code.DUPLICATE_SLUG,
                site_rel,
                None,
                f"planned slug '{plan.slug}' is already a page ({seen[plan.slug]}): remove it from `planned`",
            )
    _check_index(site, unloaded, problems)
    for page in site.pages:
        for key in ("prev", "next"):
            target = page.meta.get(key)
            if target == page.slug:
                problems.add(
                    Code.NAV,
                    page.rel,
                    page.meta["_lines"].get(key, 1),
                    f"{key}: '{target}' is this page itself: name the page that comes "
                    f"{'before' if key == 'prev' else 'after'} it, or remove `{key}:`",
                )
                continue
            # a target that is a page which failed to load, or maybe a planned page of a broken site.yml, is
            # not a second problem: the root cause is already reported
            if (
                target
                and target not in seen
                and site.planned_page(target) is None
                and target not in unloaded
                and not site_failed
            ):
                problems.add(
                    Code.NAV,
                    page.rel,
                    page.meta["_lines"].get(key, 1),
                    f"{key}: '{target}' is neither a page nor a planned page in content/site.yml",
                )
    return site


def _check_index(site: SiteSource, unloaded: set[str], problems: Problems) -> None:
    """One home page: content/index.md (slug `index`, published as index.html, which every page links), of kind
    `index`; no other page of that kind."""
    home = site.page("index")
    if home is None and "index" not in unloaded:
        problems.add(
            Code.NAV,
            rel_path(site.content_dir / "index.md", site.root),
            None,
            "missing: every page links to the home page index.html (the course title in the header, the 404 page); "
            "write content/index.md with `kind: index`",
        )
    for page in site.pages:
        line = page.meta["_lines"].get("kind", page.meta["_lines"].get("slug", 1))
        if page is home and page.meta.get("kind") != "index":
            problems.add(
                Code.NAV,
                page.rel,
                line,
                f"the home page (slug `index`, index.html, which every page links) has kind `index`, not "
                f"'{page.meta.get('kind')}'",
            )
        elif page is not home and page.meta.get("kind") == "index":
            problems.add(
                Code.NAV,
                page.rel,
                line,
                "a second index page: only the home page (content/index.md, slug `index`) has `kind: index`; "
                "give this page the kind of its section",
            )
