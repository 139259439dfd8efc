"""Every repository path a tracked file names exists: a comment, docstring, message or doc that says where something
is (`builder/cells/executor.py`, `tests/engine/test_cells.py`, `attention_course/smollm2/`) stays true when files
move. A failure lists `file:line: path` for each path that names nothing."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.conftest import ROOT

# The lead is rewriting these four; drop each from the set once its rewrite lands, so it is checked like the rest.
BEING_REWRITTEN: frozenset[str] = frozenset()

# The files whose text is read: source, tests, docs, build and CI configuration.
SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".md", ".toml", ".css", ".html", ".yml", ".yaml", ".json", ".sh")
NAMES = frozenset({"Makefile", ".ci/run"})
NOT_READ = frozenset({"package-lock.json"})  # npm's record of the registry: package paths, not ours

# Page locations the tests simulate (a page body rendered as if it were this file; expected problem lines in
# tests/*/fixtures/*.md): no such page exists, nor should it.
SIMULATED_PAGES = frozenset({"content/test.md", "content/t.md", "content/a.md", "content/b.md"})

# A placeholder or a glob names a family of paths (`attention_course/widgets/<name>/widget.py`, `content/*.md`):
# at least one of them exists.
PATTERN_CHARS = frozenset("<>*{}")


def tracked_files() -> list[str]:
    try:
        run = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [f for f in run.stdout.split("\0") if f]


def path_pattern(files: list[str]) -> re.Pattern[str]:
    """A path that starts with one of the repository's top-level folders (`builder/…`, `.github/…`); not a part
    of a longer path, URL or import specifier (`@theme/…` is resolved by builder/bundle.mjs, to theme/js/…)."""
    tops = sorted({f.split("/", 1)[0] for f in files if "/" in f}, key=len, reverse=True)
    return re.compile(r"(?<![\w./@$-])((?:" + "|".join(map(re.escape, tops)) + r")/[\w./<>*{}-]*[\w}>*])")


def named_paths(files: list[str]):
    """(file, line number, path) for every repository path named in a file that is read."""
    pattern = path_pattern(files)
    for name in files:
        if name in BEING_REWRITTEN or name in NOT_READ or not (name.endswith(SUFFIXES) or name in NAMES):
            continue
        # `\.` → `.`: a path inside a regular expression (`attention_core/core\.py`) is a path too
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace").replace("\\.", ".")
        for match in pattern.finditer(text):
            path = match.group(1).rstrip(".")
            yield name, text.count("\n", 0, match.start()) + 1, path


def pattern_matches(path: str) -> bool:
    """A placeholder or glob (`attention_course/widgets/<name>/style.css`, `content/*.md`, `fixtures/{name}.md`)
    names at least one file; a fragment of code with an unclosed `{` or `<` is not a pattern and passes."""
    glob = re.sub(r"<[^<>]*>|\{[^{}]*\}", "*", path)
    return not PATTERN_CHARS.isdisjoint(glob.replace("*", "")) or any(ROOT.glob(glob))


def git_ignored(paths: set[str]) -> set[str]:
    """The paths git ignores: what a run writes (`bench/out/site_bench.json`), absent from a fresh checkout."""
    if not paths:
        return set()
    run = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin", "-z"],
        cwd=ROOT,
        input="\0".join(sorted(paths)),
        capture_output=True,
        text=True,
    )
    return {p for p in run.stdout.split("\0") if p}


def test_every_named_path_exists() -> None:
    files = tracked_files()
    missing = []
    for name, number, path in named_paths(files):
        if (ROOT / path).exists() if PATTERN_CHARS.isdisjoint(path) else pattern_matches(path):
            continue
        if path in SIMULATED_PAGES and name.startswith("tests/"):
            continue
        missing.append((name, number, path))
    ignored = git_ignored({path for _, _, path in missing})
    stale = [f"{name}:{number}: {path}" for name, number, path in missing if path not in ignored]
    assert not stale, f"{len(stale)} named path(s) do not exist:\n" + "\n".join(stale)


def test_the_scan_finds_paths_and_skips_what_is_not_one() -> None:
    """The pattern takes a path whole and leaves out URLs, import specifiers and longer paths; a placeholder or glob
    passes when it names some file."""
    files = ["builder/cells/executor.py", "theme/js/site.js", "content/index.md", ".github/workflows/pages.yml"]
    pattern = path_pattern(files)

    def found(line: str) -> list[str]:
        return [m.group(1).rstrip(".") for m in pattern.finditer(line)]

    assert found("see builder/cells/executor.py `child_main`.") == ["builder/cells/executor.py"]
    assert found("(.github/workflows/pages.yml)") == [".github/workflows/pages.yml"]
    assert found("content/index.md:3: error") == ["content/index.md"]
    assert found('import "@theme/site/x.js"; https://example.org/builder/x.py; /tmp/theme/x.js') == []
    assert found("theme/js/<name>.js, content/*.md") == ["theme/js/<name>.js", "content/*.md"]
    assert pattern_matches("attention_course/widgets/<name>/style.css") and pattern_matches("content/*.md")
    assert not pattern_matches("theme/css/" + "widgets/<name>.css")  # (split: this file is read too)
    assert pattern_matches("theme/templates/{getattr")  # an f-string cut at the path's end: code, not a pattern
