"""Writing the site: everything goes into a fresh temporary folder that is then swapped into place, so a
failed build leaves the previous site intact — but unchanged files are hard links to the previous site's
files instead of copies (a rebuild does not rewrite 30 MB of Python runtime).

The build never deletes what it did not make: it replaces only an output folder that is empty or that a previous
build marked as its own (MARKER, written into every output), never one that is, holds or lies in its sources
(`refusal`), and what an interrupted build left beside the output is cleaned up by the next (`clean_leftovers`).

A hard link shares its bytes with the previous site, so nothing here ever writes *into* an existing file:
a changed file is always a new file (unlink, then write). Writers that add large outputs (the Python
runtime) may set `writer.reuse_dir = "assets/python"`: that folder of the previous site is hard-linked into
the new one before the writer runs, and the writer only replaces what changed (it must replace files with
`os.replace`, never write into them).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from .model import BuildOptions

MARKER = ".built-by-course-builder"
"""Written into every output folder: the build replaces only a folder that is empty or holds this file."""
MARKER_TEXT = (
    "This folder is the output of the course's build (python build.py --out …).\n"
    "Every build replaces the whole folder, so do not keep anything of your own here.\n"
    "The build replaces only an empty folder or one holding this file: delete the file and the folder is safe\n"
    "from the build (which will then refuse to write into it).\n"
).encode()


class OutputRefused(Exception):
    """The output folder is not one the build may replace; the message says why (nothing was touched)."""


def _contains(outer: Path, inner: Path) -> bool:
    return inner == outer or inner.is_relative_to(outer)


def refusal(out_dir: Path, protected: Iterable[tuple[str, Path, bool]]) -> str | None:
    """Why the build must not replace `out_dir`, or None. `protected`: (what, folder, may_hold_out) — the folders
    the output may neither be nor contain (the content folder, the theme, the project root, the cache); unless
    `may_hold_out`, it may not lie inside them either (the project root may hold site/, the sources may not).

    Like MkDocs and Sphinx, which refuse to build into their own sources; beyond them, a folder that exists is
    replaced only when it is empty or a previous build marked it as its own (MARKER)."""
    out = Path(os.path.abspath(out_dir)).resolve()
    folders = [(what, folder.resolve(), may_hold_out) for what, folder, may_hold_out in protected]
    for what, folder, _ in folders:
        if out == folder:
            return f"it is the {what}: the build replaces its output folder as a whole, and would delete it"
    for what, folder, _ in folders:
        if _contains(out, folder):
            return (
                f"it contains the {what} ({folder}): the build replaces its output folder as a whole, and would "
                "delete it"
            )
    for what, folder, may_hold_out in folders:
        if not may_hold_out and _contains(folder, out):
            return f"it lies inside the {what} ({folder}): the output must be a folder of its own, outside it"
    ancestor = out
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if ancestor != out and not ancestor.is_dir():
        return f"{ancestor} is a file, not a folder"
    if not out.exists():
        return None
    if not out.is_dir():
        return "it is a file, not a folder; name a folder (new or empty) for the site"
    if (out / MARKER).is_file():
        return None
    entries = sorted(p.name for p in out.iterdir())
    if not entries:
        return None
    shown = ", ".join(entries[:5]) + (f", … ({len(entries)} entries)" if len(entries) > 5 else "")
    return (
        f"the folder is not empty and no build made it (it has no {MARKER}): it holds {shown}. The build replaces "
        "its output folder as a whole, so it writes only into a new or empty folder or one it made itself; "
        "choose another --out, or empty this one yourself"
    )


def protected(options: BuildOptions) -> list[tuple[str, Path, bool]]:
    """The folders the output must stay out of (see `refusal`)."""
    folders = [
        ("content folder", options.content_dir, False),
        ("theme", options.theme_dir, False),
        ("project root (the repository)", options.root, True),
        ("build's own code", Path(__file__).resolve().parent, False),
        ("repository's history", options.root / ".git", False),
    ]
    if options.cache_dir is not None:
        folders.append(("cache folder", options.cache_dir, False))
    return folders


def output_refusal(options: BuildOptions) -> str | None:
    """Why the build must not write the site into `options.out_dir`, or None."""
    return refusal(options.out_dir, protected(options))


LEFTOVER_RE = re.compile(r"\.(?P<name>.+)\.(?P<kind>new|old)-(?P<pid>\d+)$")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process's own leftover from an earlier, interrupted build (the authoring server)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_leftovers(out_dir: Path) -> list[Path]:
    """Remove the temporary folders an interrupted or crashed build left beside `out_dir` (`.<name>.new-<pid>`,
    `.<name>.old-<pid>`): only those that hold the build's MARKER and whose process is gone. When `out_dir` itself
    is missing (a crash between the two renames of the swap), the previous site is moved back instead of removed.
    Returns what was removed."""
    removed = []
    if not out_dir.parent.is_dir():
        return removed
    for path in sorted(out_dir.parent.iterdir()):
        m = LEFTOVER_RE.match(path.name)
        if not m or m["name"] != out_dir.name or not path.is_dir() or path.is_symlink():
            continue
        if _alive(int(m["pid"])) or not (path / MARKER).is_file():
            continue
        if m["kind"] == "old" and not out_dir.exists():
            path.rename(out_dir)
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        if path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False


def _link_or_copy(src: Path, dest: Path) -> None:
    try:
        os.link(src, dest)
    except OSError:  # another file system, or links not supported: copy
        shutil.copy2(src, dest)


def link_tree(src: Path, dest: Path) -> int:
    """Hard-link every file of `src` into `dest` (same relative paths). Returns the number of files."""
    n = 0
    for folder, _dirs, names in os.walk(src):
        rel = Path(folder).relative_to(src)
        (dest / rel).mkdir(parents=True, exist_ok=True)
        for name in names:
            _link_or_copy(Path(folder) / name, dest / rel / name)
            n += 1
    return n


def write_site(
    files: dict[str, bytes], out_dir: Path, writers: list[Callable[[Path], None]] | None = None
) -> dict[str, int]:
    """Write `files` (+ what `writers` add) as the new `out_dir`, atomically replacing the old one.

    Returns counts: {"linked": unchanged files re-used from the previous site, "written": files written}.
    """
    out_dir = out_dir.resolve()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(out_dir)
    reason = refusal(out_dir, ())
    if reason:
        raise OutputRefused(reason)
    tmp = out_dir.parent / f".{out_dir.name}.new-{os.getpid()}"
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    tmp.mkdir()
    stats = {"linked": 0, "written": 0}
    try:
        # first: a leftover of this build is recognisably its own (unchanged, it is the previous site's, linked)
        if _same_bytes(out_dir / MARKER, MARKER_TEXT):
            _link_or_copy(out_dir / MARKER, tmp / MARKER)
        else:
            (tmp / MARKER).write_bytes(MARKER_TEXT)
        for writer in writers or []:
            reuse = getattr(writer, "reuse_dir", None)
            if reuse and (out_dir / reuse).is_dir():
                stats["linked"] += link_tree(out_dir / reuse, tmp / reuse)
        made: set[Path] = {tmp}
        for rel, data in sorted(files.items()):
            path = tmp / rel
            if path.parent not in made:
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            if path.exists():  # a hard link seeded above: never write through it
                path.unlink()
            previous = out_dir / rel
            if _same_bytes(previous, data):
                _link_or_copy(previous, path)
                stats["linked"] += 1
            else:
                path.write_bytes(data)
                stats["written"] += 1
        for writer in writers or []:
            writer(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    reason = refusal(out_dir, ())  # again: something may have been put there while the site was being written
    if reason:
        shutil.rmtree(tmp, ignore_errors=True)
        raise OutputRefused(reason)
    try:
        if out_dir.exists():
            out_dir.rename(old)
        tmp.rename(out_dir)
    except BaseException:  # Ctrl-C or an error between the two renames: the previous site goes back in place
        if old.exists() and not out_dir.exists():
            old.rename(out_dir)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)
    return stats
