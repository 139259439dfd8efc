"""Figures with Chinese on a machine without a CJK font: the build's matplotlib draws with the font the build brings
(Noto Sans SC from the pinned npm package, cut to the common hanzi: builder/runtime/fonts.py), never with the
machine's, so a fresh machine (no `fonts-noto-cjk`, the normal case for a new author and for CI) stores the very
figure bytes a machine with every font does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, build

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="the build's figures are drawn in Pyodide")

PAGE = """---
title: 画图
kind: module
module: 1
---
## 图

```{code-cell} python
:id: plot
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(4, 2.5))
ax.bar(["猫", "追", "老鼠"], [0.2, 0.5, 0.3])
ax.set_title("注意力权重：温度的变化")
ax.set_xlabel("词（Key）")
plt.show()
```
"""

NO_FONTS = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir>{empty}</dir><cachedir>{cache}</cachedir></fontconfig>
"""


def _no_fonts_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a machine without fonts: fontconfig reads a configuration that lists one empty folder,
    matplotlib's font cache and every home folder are new."""
    (tmp_path / "empty").mkdir(parents=True)
    conf = tmp_path / "fonts.conf"
    conf.write_text(NO_FONTS.format(empty=tmp_path / "empty", cache=tmp_path / "fc-cache"), encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "FONTCONFIG_FILE": str(conf),
        "FONTCONFIG_PATH": str(tmp_path),
        "MPLCONFIGDIR": str(tmp_path / "mpl"),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PYTHONPATH": str(ROOT),
    }


def _figures(site: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(site.rglob("*.png"))}


@pytest.mark.slow
def test_a_machine_without_cjk_fonts_stores_the_same_figure_bytes(make_content, tmp_path) -> None:
    make_content("plot.md", PAGE)
    env = _no_fonts_env(tmp_path / "bare")
    if shutil.which("fc-list"):  # the premise: fontconfig sees no font at all there
        listed = subprocess.run(["fc-list"], env=env, capture_output=True, text=True, check=True).stdout
        assert listed.strip() == ""

    build(make_content.dir, tmp_path / "here", cache_dir=tmp_path / "cache-here", python_runtime=True)
    bare = subprocess.run(
        [sys.executable, "build.py", "--content", str(make_content.dir), "--out", str(tmp_path / "bare-site")]
        + ["--cache-dir", str(tmp_path / "cache-bare")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert bare.returncode == 0, bare.stderr

    here, there = _figures(tmp_path / "here"), _figures(tmp_path / "bare-site")
    assert len(here) == 1 and here == there
    page = (tmp_path / "bare-site" / "plot.html").read_text(encoding="utf-8")
    assert "missing from font" not in page  # matplotlib's warning for a character no font has
    assert (tmp_path / "here" / "plot.html").read_text(encoding="utf-8") == page
