"""Front-end bundling: one esbuild run (builder/bundle.mjs, under Node) turns every entry point of the theme into a
classic IIFE script and minifies the theme's stylesheets.

Classic scripts, not ES modules, because `<script type="module">` does not load from file://. The entry points:
each top-level theme/js/*.js (site.js, cells.js, editor.js, search.js) → assets/<name>.js; one page script per
widget kind → assets/widget-<name>.js (made by bundle.mjs from the kind's folder's widget.js); and, with the Python
runtime, builder/runtime/browser/python-runtime.js → assets/python/python-runtime.js. The output is deterministic for
the same inputs (no timestamps, no absolute paths).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

PROGRAM = Path(__file__).with_name("bundle.mjs")
PYTHON_RUNTIME_ENTRY = Path(__file__).resolve().parent / "runtime" / "browser" / "python-runtime.js"
"""The Python runtime's entry (→ assets/python/python-runtime.js): the engine's, whatever the theme."""
PYTHON_RUNTIME_OUT = "assets/python/python-runtime.js"


BROWSER_GLOBAL = "Course"
"""The site's one browser global (theme/js/shared/course.js): every script and data script hangs its part on it."""


def browser_namespace(part: str) -> str:
    """A JS expression for `Course.<part>`, creating both on first use (data scripts may run before any bundle)."""
    g = BROWSER_GLOBAL
    return f"((self.{g}=self.{g}||{{}}).{part}=self.{g}.{part}||{{}})"


def browser_data_prefix(part: str, key: str) -> str:
    """What a data script writes before its JSON: `Course.<part>.<key>=` (as a classic script: fetch() is
    blocked on file://, a <script src> is not)."""
    return f"{browser_namespace(part)}.{key}="


def browser_data_script(part: str, key: str, json_text: str) -> bytes:
    return f"{browser_data_prefix(part, key)}{json_text};\n".encode()


def widget_data_script(kind: str, part: str, json_text: str) -> tuple[dict[str, str], dict[str, bytes]]:
    """Numbers a widget keeps out of its page, as a data script named by their content:
    ({"data": its path, "key": …} for the page's JSON, {path: the script}); the widget's `loadDataScript`
    (theme/js/widgets/data-script.js) reads `Course.<part>.d<key>`."""
    key = hashlib.sha256(json_text.encode()).hexdigest()[:12]
    path = f"assets/widgets/{kind}-{key}.js"
    return {"data": path, "key": key}, {path: browser_data_script(part, f"d{key}", json_text)}


class BundleError(RuntimeError):
    """esbuild failed; the message carries esbuild's own diagnostics."""


def _run(root: Path, spec: dict) -> dict:
    node = shutil.which("node")
    esbuild = root / "node_modules" / "esbuild"
    if node is None or not esbuild.is_dir():
        raise BundleError(f"{'node' if node is None else esbuild} not found: run `npm ci` (or `make site`) first")
    with tempfile.TemporaryDirectory(prefix="bundle-") as tmp:
        spec_file = Path(tmp) / "spec.json"
        spec_file.write_text(
            json.dumps(
                {
                    **spec,
                    "esbuild": str(esbuild),
                    "nodeModules": str(root / "node_modules"),
                    "outdir": str(Path(tmp) / "out"),
                }
            ),
            "utf-8",
        )
        proc = subprocess.run(
            [node, str(PROGRAM), str(spec_file)],
            cwd=root,
            capture_output=True,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
        )
    if proc.returncode != 0:
        raise BundleError(f"esbuild failed:\n{proc.stderr.strip()}")
    return json.loads(proc.stdout)


def bundle_front_end(
    root: Path,
    theme_dir: Path,
    *,
    widgets: dict[str, Path],
    python_runtime: bool,
    css_files: list[Path] = (),
    page_scripts: bool = True,
    minify: bool = True,
) -> tuple[dict[str, bytes], dict[str, str]]:
    """({"assets/site.js": bytes, …, "assets/widget-<name>.js": …, "assets/python/python-runtime.js": …},
    {stylesheet path: minified text}) from one esbuild run. `page_scripts=False` leaves out the top-level
    theme/js/*.js entries (a runtime bundled on its own)."""
    js_dir = theme_dir / "js"
    entries: list[dict] = [{"out": p.stem, "path": str(p)} for p in sorted(js_dir.glob("*.js")) if page_scripts]
    entries += [
        {"out": f"widget-{name}", "widget": name, "path": str(folder / "widget.js")}
        for name, folder in sorted(widgets.items())
    ]
    if python_runtime:
        entries.append({"out": "python/python-runtime", "path": str(PYTHON_RUNTIME_ENTRY)})
    result = _run(
        root,
        {
            "entries": entries,
            "css": [str(p) for p in css_files],
            "minify": minify,
            "themeJs": str(js_dir),
        },
    )
    scripts = {f"assets/{name}": text.encode("utf-8") for name, text in sorted(result["files"].items())}
    return scripts, {Path(path): text for path, text in result["css"].items()}


def esbuild_minify_css(root: Path, css: str) -> str:
    """One stylesheet minified exactly as the build minifies the theme's (tests compare against it)."""
    with tempfile.TemporaryDirectory(prefix="css-") as tmp:
        path = Path(tmp) / "style.css"
        path.write_text(css, "utf-8")
        return _run(root, {"entries": [], "css": [str(path)], "minify": True, "themeJs": tmp})["css"][str(path)]
