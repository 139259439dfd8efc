#!/usr/bin/env python3
"""Build-speed benchmark: a synthetic corpus of N pages (~8 formulas each, shared and unique), timed
cold (empty cache, no previous site), warm with no change, and after a one-line edit of one page.

    .venv/bin/python bench/build_bench.py                # 200 and 2000 pages
    .venv/bin/python bench/build_bench.py --pages 500 --jobs 2

Times are of `build_site()` in this process (the CLI adds ~0.3 s of Python start-up and imports).
Results go in docs/performance.md (section 构建速度), not in tests.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from builder.model import BuildOptions  # noqa: E402
from builder.pipeline import build_site  # noqa: E402

SHARED_FORMULAS = [
    r"\mathrm{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V",
    r"QK^\top",
    r"\sqrt{d_k}",
    r"\alpha_{ij}",
    r"\sum_{j=1}^{n} \alpha_{ij} v_j",
    r"e^{s_i} / \sum_j e^{s_j}",
    r"W_Q, W_K, W_V",
    r"\mathbb{R}^{n \times d}",
    r"\begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}",
    r"h = \mathrm{Concat}(h_1, \dots, h_H) W_O",
]


def page_text(i: int, n: int, rng: random.Random, edit: str = "") -> str:
    """A page like the course's: headings, prose, links to neighbours, 8 formulas (≈ half shared)."""
    lines = [
        "---",
        f"title: 第 {i} 节 · 注意力的第 {i} 个侧面",
        f"slug: p{i:05d}",
        "kind: explainer",
        f"summary: 合成页面 {i}，用于测量构建速度。",
        f"order: {i}",
        "---",
        "",
    ]
    for section in range(4):
        lines += [f"## 第 {section + 1} 部分 {{#s{section}}}", ""]
        shared = SHARED_FORMULAS[rng.randrange(len(SHARED_FORMULAS))]
        unique = rf"x_{{{i}}}^{{({section})}} = \frac{{{i} + {section}}}{{\sqrt{{{rng.randint(2, 99)}}}}}"
        lines += [f"查询向量与键向量相乘得到分数 ${shared}$，随后做归一化。{edit}", "", f"$$\n{unique}\n$$", ""]
        target = f"p{(i + 1) % n:05d}.html#s{section}"
        lines += [f"参见[下一页的第 {section + 1} 部分]({target})。这里是一段较长的中文说明文字，" * 2, ""]
    return "\n".join(lines) + "\n"


def make_corpus(dest: Path, n: int) -> Path:
    content = dest / "content"
    content.mkdir(parents=True)
    (content / "site.yml").write_text("series: 构建基准\ntitle: 构建基准课程\nplanned: []\n", encoding="utf-8")
    (content / "index.md").write_text("---\ntitle: 首页\nkind: index\n---\n基准首页。\n", encoding="utf-8")
    for i in range(n):
        rng = random.Random(i)
        (content / f"p{i:05d}.md").write_text(page_text(i, n, rng), encoding="utf-8")
    return content


def timed(options: BuildOptions) -> float:
    started = time.perf_counter()
    build_site(options)
    return time.perf_counter() - started


def bench(n: int, jobs: int | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="build-bench-") as tmp:
        tmp_path = Path(tmp)
        content = make_corpus(tmp_path, n)
        options = BuildOptions(
            root=ROOT,
            content_dir=content,
            theme_dir=ROOT / "theme",
            out_dir=tmp_path / "site",
            cache_dir=tmp_path / "cache",
            python_runtime=False,
            jobs=jobs,
        )
        cold = timed(options)
        warm = timed(options)
        target = content / f"p{n // 2:05d}.md"
        target.write_text(
            target.read_text(encoding="utf-8").replace("随后做归一化。", "随后做归一化（已编辑）。", 1),
            encoding="utf-8",
        )
        one_edit = timed(options)
        assert "已编辑" in (tmp_path / "site" / f"p{n // 2:05d}.html").read_text(encoding="utf-8")
        shutil.rmtree(tmp_path / "site")
        return {"cold": cold, "warm": warm, "one-edit": one_edit}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, nargs="*", default=[200, 2000])
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    args = ap.parse_args()
    print(f"{'pages':>6} | {'cold (s)':>9} | {'warm no-change (s)':>18} | {'one-edit (s)':>12}")
    print(f"{'-' * 6}-|-{'-' * 9}-|-{'-' * 18}-|-{'-' * 12}")
    for n in args.pages:
        r = bench(n, args.jobs)
        print(f"{n:>6} | {r['cold']:>9.2f} | {r['warm']:>18.3f} | {r['one-edit']:>12.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
