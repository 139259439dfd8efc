"""Command line: `python build.py [--out DIR] [--content DIR] [--zip] [--serve] …`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import BuildFailed
from .site import ROOT, BuildOptions, build_site


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="build.py", description="Build the attention course into a static site.")
    p.add_argument("--content", type=Path, default=ROOT / "content", help="content folder (default: content/)")
    p.add_argument("--theme", type=Path, default=ROOT / "theme", help="theme folder (default: theme/)")
    p.add_argument("--out", type=Path, default=ROOT / "site", help="output folder (default: site/)")
    p.add_argument("--cache-dir", type=Path, default=ROOT / ".cache", help="persistent cache (default: .cache/)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the persistent cache")
    p.add_argument("--pyodide-dir", type=Path, default=None,
                   help="use a local official Pyodide 0.27.7 distribution instead of node_modules/pyodide")
    p.add_argument("--no-python", action="store_true", help="skip copying the Python runtime (code cells will not run)")
    return p.parse_args(argv)


def options_from(args: argparse.Namespace) -> BuildOptions:
    return BuildOptions(
        root=ROOT,
        content_dir=args.content.resolve(),
        theme_dir=args.theme.resolve(),
        out_dir=args.out.resolve(),
        cache_dir=None if args.no_cache else args.cache_dir.resolve(),
        pyodide_dir=args.pyodide_dir.resolve() if args.pyodide_dir else None,
        python_runtime=not args.no_python,
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    options = options_from(args)
    try:
        result = build_site(options)
    except BuildFailed as failed:
        for problem in failed.problems.sorted():
            print(problem, file=sys.stderr)
        n = len(failed.problems)
        print(f"build failed: {n} problem{'s' if n != 1 else ''}; {options.out_dir} left unchanged", file=sys.stderr)
        return 1
    print(result.summary())
    return 0
