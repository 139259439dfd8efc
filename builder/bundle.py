"""Front-end bundling: esbuild turns our ES-module sources into classic IIFE scripts.

Classic scripts, not ES modules, because `<script type="module">` does not load from file://.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class BundleError(RuntimeError):
    """esbuild failed; the message carries esbuild's own diagnostics."""


def esbuild_binary() -> Path:
    binary = ROOT / "node_modules" / ".bin" / "esbuild"
    if not binary.exists():
        raise BundleError(f"{binary} not found: run `npm ci` (or `make site`) first")
    return binary


def esbuild_bundle(
    entry: Path,
    outfile: Path,
    *,
    minify: bool = True,
    global_name: str | None = None,
    loaders: dict[str, str] | None = None,
    define: dict[str, str] | None = None,
) -> Path:
    """Bundle `entry` and its imports into one classic script at `outfile`.

    `loaders` maps an extension to an esbuild loader, e.g. {".txt": "text"} to import a file as a string.
    The output is deterministic for the same inputs (no timestamps, no absolute paths).
    """
    outfile.parent.mkdir(parents=True, exist_ok=True)
    args = [
        str(esbuild_binary()),
        str(entry),
        "--bundle",
        "--format=iife",
        "--target=es2020",
        "--charset=utf8",
        "--legal-comments=none",
        f"--outfile={outfile}",
        "--log-level=warning",
    ]
    if minify:
        args.append("--minify")
    if global_name:
        args.append(f"--global-name={global_name}")
    for ext, loader in (loaders or {}).items():
        args.append(f"--loader:{ext}={loader}")
    for key, value in (define or {}).items():
        args.append(f"--define:{key}={value}")
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    if proc.returncode != 0:
        raise BundleError(f"esbuild failed for {entry}:\n{proc.stderr.strip()}")
    return outfile


def esbuild_minify_css(css: str) -> str:
    """Minify a stylesheet with esbuild (same output for the same input)."""
    args = [str(esbuild_binary()), "--loader=css", "--minify", "--charset=utf8", "--log-level=warning"]
    proc = subprocess.run(args, cwd=ROOT, input=css, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"})
    if proc.returncode != 0:
        raise BundleError(f"esbuild could not minify the theme CSS:\n{proc.stderr.strip()}")
    return proc.stdout
