"""Command line: `python build.py [--out DIR] [--content DIR] [--zip] [--serve] …`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import output, progress
from .errors import BuildFailed
from .model import DEFAULT_ROOT, BuildOptions
from .pipeline import build_site

EPILOG = """\
what --out replaces:
  every build writes the whole site into a new folder beside --out, then swaps it in place of --out: nothing of
  the old folder survives. So the build replaces only a folder that does not exist yet, is empty, or that a
  previous build made (it holds the file .built-by-course-builder); it refuses any other folder, and one that is,
  holds or lies inside the content folder, the theme or the cache, or that holds the repository (exit 1, nothing
  touched). --zip likewise replaces only <dist>/attention-course.zip, and only if a build made it.

what --no-cache skips:
  the persistent build cache (<cache-dir>/build.sqlite, katex.sqlite): every page is parsed, every cell run,
  every formula typeset and every asset bundled anew. It does not skip the machine-wide cache, whose files are
  checked by their sha256 or named by their inputs: $COURSE_MACHINE_CACHE, else $XDG_CACHE_HOME/attention-course,
  else ~/.cache/attention-course, with downloads/ (pinned files: the Python runtime's wheels and font, a course's
  data sources) and derived/ (what is computed from them: the Python runtime's prepared files in derived/pyodide,
  a course's model runs and trained results). Delete it to start from nothing.

environment variables:
  COURSE_MACHINE_CACHE (and XDG_CACHE_HOME, for its default) says only where that cache lives: the site's bytes
  are the same wherever it is. Nor do the machine's fonts (fontconfig, matplotlib's font cache): the figures of
  code cells draw with the fonts the build brings, a Chinese one included. OPENBLAS_NUM_THREADS, OMP_NUM_THREADS,
  MKL_NUM_THREADS do not change the output either: the build runs its NumPy on one BLAS thread. One thing does:
  whether `node` is on PATH (with Node the build-time code cells run in Pyodide, the reader's own runtime; without
  it in CPython, whose figures and printed floats may differ).

output on the terminal:
  the long steps (downloads, the Python runtime's preparation, model runs, code cells, typesetting) as they run —
  a progress bar when stderr is a terminal, plain lines otherwise (a CI log) — then the seconds each stage took,
  all on stderr; warnings and errors as path:line: message on stderr; the closing "built …" line on stdout.
"""


def data_sources_help(content_dir: Path) -> str:
    """The data sources the course of `content_dir` declares (builder/data_sources.py), for `--help`."""
    from .course import CourseError, load_course
    from .data_sources import describe_all

    try:
        course = load_course(content_dir.resolve(), DEFAULT_ROOT)
    except CourseError as exc:
        return f"\ndata sources: the course of {content_dir} cannot be loaded: {exc}\n"
    if not course.data_sources:
        return ""
    lines = describe_all(course.data_sources)
    return f"\ndata sources of {course.name} (the course of {content_dir}), fetched or computed once per machine:\n" + (
        "\n".join(lines) + "\n"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    words = sys.argv[1:] if argv is None else argv
    epilog = EPILOG
    if "-h" in words or "--help" in words:  # only then is the course loaded (its widgets import NumPy)
        epilog += data_sources_help(_content_arg(words) or DEFAULT_ROOT / "content")
    p = argparse.ArgumentParser(
        prog="build.py",
        description="Build a course (the content folder's pages, its site.yml and course package) into a static site.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--content", type=Path, default=DEFAULT_ROOT / "content", help="content folder (default: content/)")
    p.add_argument("--theme", type=Path, default=DEFAULT_ROOT / "theme", help="theme folder (default: theme/)")
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_ROOT / "site",
        help="output folder (default: site/), replaced as a whole by every build: a new or empty folder, or one "
        "a previous build made (see below)",
    )
    p.add_argument(
        "--cache-dir", type=Path, default=DEFAULT_ROOT / ".cache", help="persistent cache (default: .cache/)"
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="do not read or write the persistent build cache: everything is built anew (see below for what it "
        "does not skip)",
    )
    p.add_argument(
        "--pyodide-dir",
        type=Path,
        default=None,
        help="use a local official Pyodide 0.27.7 distribution instead of node_modules/pyodide",
    )
    p.add_argument("--no-python", action="store_true", help="skip copying the Python runtime (code cells will not run)")
    p.add_argument("--jobs", type=int, default=None, help="worker processes for rendering pages (default: all cores)")
    p.add_argument(
        "--zip", action="store_true", help="after building, write the offline package dist/attention-course.zip"
    )
    p.add_argument("--dist", type=Path, default=DEFAULT_ROOT / "dist", help="folder for --zip (default: dist/)")
    p.add_argument(
        "--serve", action="store_true", help="build, serve on 127.0.0.1, rebuild and reload pages on every change"
    )
    p.add_argument("--port", type=int, default=8000, help="port for --serve (default: 8000)")
    return p.parse_args(argv)


def _content_arg(words: list[str]) -> Path | None:
    for i, word in enumerate(words):
        if word.startswith("--content="):
            return Path(word.split("=", 1)[1])
        if word == "--content" and i + 1 < len(words):
            return Path(words[i + 1])
    return None


def options_from(args: argparse.Namespace) -> BuildOptions:
    return BuildOptions(
        root=DEFAULT_ROOT,
        content_dir=args.content.resolve(),
        theme_dir=args.theme.resolve(),
        out_dir=args.out.resolve(),
        cache_dir=None if args.no_cache else args.cache_dir.resolve(),
        pyodide_dir=args.pyodide_dir.resolve() if args.pyodide_dir else None,
        python_runtime=not args.no_python,
        jobs=args.jobs,
    )


def _not_a_folder(path: Path) -> str | None:
    """Why `path` cannot be (or become) a folder, or None."""
    if path.exists():
        return None if path.is_dir() else "it is a file, not a folder"
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    return None if ancestor.is_dir() else f"{ancestor} is a file, not a folder"


def refusals(args: argparse.Namespace, options: BuildOptions) -> list[str]:
    """`error: …` lines for arguments the build must not go ahead with (checked before any work)."""
    errors = []
    for flag, folder in (("--content", options.content_dir), ("--theme", options.theme_dir)):
        if not folder.is_dir():
            what = "is a file, not a folder" if folder.exists() else "no such folder"
            errors.append(f"error: {flag} {folder}: {what}")
    if options.cache_dir is not None:
        reason = _not_a_folder(options.cache_dir)
        if reason:
            errors.append(f"error: --cache-dir {options.cache_dir}: {reason}")
    reason = output.output_refusal(options)
    if reason:
        errors.append(f"error: --out {options.out_dir}: {reason}")
    if args.zip:
        from .zipsite import ZIP_NAME, zip_refusal

        reason = zip_refusal(
            args.dist.resolve(), ZIP_NAME, output.protected(options) + [("output folder", options.out_dir, False)]
        )
        if reason:
            errors.append(f"error: --dist {args.dist.resolve()}: {reason}")
    return errors


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    options = options_from(args)
    errors = refusals(args, options)
    if errors:
        for line in errors:
            print(line, file=sys.stderr)
        return 1
    if args.serve:
        from .serve import DevServer

        DevServer(options, args.port).serve_forever()
        return 0
    progress.enable(sys.stderr)  # the long steps as they run, and where the time went (builder/progress.py)
    try:
        result = build_site(options)
    except BuildFailed as failed:
        for problem in failed.problems.sorted():
            print(problem, file=sys.stderr)
        n = failed.errors
        print(f"build failed: {n} error{'s' if n != 1 else ''}; {options.out_dir} left unchanged", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: one line; the output stage removes its temporary folder itself
        print(f"build interrupted; {options.out_dir} left unchanged", file=sys.stderr)
        return 130
    else:
        for warning in result.warnings:
            print(warning, file=sys.stderr)
        print(progress.summary(), file=sys.stderr)
        print(result.summary())
    finally:
        progress.disable()  # a caller that goes on (a test, a script) writes to its own streams again
    if args.zip:
        from .zipsite import ZIP_NAME, zip_site

        path = zip_site(options.out_dir, args.dist.resolve() / f"{ZIP_NAME}.zip")
        print(f"offline package: {path} ({path.stat().st_size / 1e6:.1f} MB) — unzip and open {ZIP_NAME}/index.html")
    return 0
