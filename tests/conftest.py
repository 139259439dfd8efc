"""Shared fixtures: project paths and a helper that builds a site from a content folder."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from builder.errors import BuildFailed  # noqa: E402
from builder.model import BuildOptions, BuildResult  # noqa: E402
from builder.pipeline import build_site  # noqa: E402

TEST_CACHE = ROOT / ".test-cache"
"""The tests' own persistent build cache (downloads, typeset formulas, the Python runtime's compiled files): never the
developer's .cache, so a test can neither use nor spoil what `make site` made."""
# Every build a test makes, whatever its cache folder, finds the real model (and its cached results) here: one
# download per machine (builder/real_model/). Spawned worker processes inherit it.
os.environ.setdefault("COURSE_MODEL_DIR", str(TEST_CACHE / "models"))
# Likewise the Python runtime's cache entries (builder/runtime/files.py): a test with a cache folder of its own
# (a cell cache, a page cache) does not make matplotlib's packs, the CJK font and the snapshot again.
os.environ.setdefault("COURSE_RUNTIME_DIR", str(TEST_CACHE / "pyodide"))


def build(
    content_dir: Path, out_dir: Path, *, python_runtime: bool = False, cache_dir: Path | None = None
) -> BuildResult:
    """Build `content_dir` into `out_dir` with the real theme; raises BuildFailed."""
    return build_site(
        BuildOptions(
            root=ROOT,
            content_dir=content_dir,
            theme_dir=ROOT / "theme",
            out_dir=out_dir,
            cache_dir=cache_dir if cache_dir is not None else TEST_CACHE,
            python_runtime=python_runtime,
        )
    )


@pytest.fixture
def make_content(tmp_path: Path):
    """Create a minimal valid content folder and return a writer for extra/overridden files."""
    content = tmp_path / "content"
    content.mkdir()
    (content / "site.yml").write_text(
        "series: 测试系列\ntitle: 测试课程\nplanned:\n  - {slug: coming, title: 即将推出的页面, kind: explainer}\n",
        encoding="utf-8",
    )
    (content / "index.md").write_text("---\ntitle: 首页\nkind: index\n---\n欢迎。\n", encoding="utf-8")

    def write(name: str, text: str) -> Path:
        path = content / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    write.dir = content  # type: ignore[attr-defined]
    return write


def copy_content(dest: Path) -> Path:
    shutil.copytree(ROOT / "content", dest)
    return dest


__all__ = ["ROOT", "TEST_CACHE", "build", "BuildFailed", "copy_content"]


def run_js_module(tmp_path: Path, modules: dict[str, Path], script: str, data: object = None):
    """Run `script` as an ES module in Node inside `tmp_path`, with each theme module copied in under its given
    .mjs name (theme files are plain .js, which Node would read as CommonJS) and `data` as ./data.json; returns
    the JSON the script writes to stdout."""
    import json
    import subprocess

    for name, source in modules.items():
        shutil.copy(source, tmp_path / name)
    if data is not None:
        (tmp_path / "data.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)
