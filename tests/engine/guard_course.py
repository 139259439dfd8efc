"""A tiny course for the guard-rail tests (tests/engine/test_guard_*.py): a content folder with its own course package,
as examples/ does (builder/course.py), so the engine is tested without the real course and its 93 MB model.

The package `guard_course` has one widget kind, `blas-dot`, whose data is computed with NumPy the way a model's
forward pass is: a long dot product and a matrix product, which OpenBLAS splits between its threads (the last digits
of the float then depend on how many there are). Its data is kept as `repr` strings, so no rounding hides them.
"""

from __future__ import annotations

from pathlib import Path

SITE_YML = """\
series: 护栏
title: 护栏测试
course: guard_course
kinds:
  explainer: {title: 讲解}
planned:
  - {slug: coming, title: 即将推出, kind: explainer}
"""

INIT = """\
from pathlib import Path

from builder.course import Course


def setup(course: Course) -> None:
    course.add_widgets(Path(__file__).parent / "widgets", package=f"{__name__}.widgets")
"""

WIDGET_PY = """\
import numpy as np
from markdown_it.common.utils import escapeHtml

from builder.widgets.schema import Option, Widget


def compute(options: dict) -> dict:
    rng = np.random.default_rng(int(options["seed"]))
    x, y = rng.standard_normal(2_000_000), rng.standard_normal(2_000_000)
    m = rng.standard_normal((400, 400))
    return {"label": options["label"], "dot": repr(float(x @ y)), "row": [repr(float(v)) for v in (m @ m)[0, :4]]}


def fallback(data: dict) -> str:
    return f'<p class="blas-dot">{escapeHtml(data["label"])}: {data["dot"]} · {" ".join(data["row"])}</p>'


WIDGET = Widget(
    "blas-dot",
    "点积",
    {
        "seed": Option("integer", 1, "the random numbers' seed", minimum=0, maximum=1000),
        "label": Option("text", "两个长向量的点积", "the caption"),
    },
    compute,
    fallback,
)
"""

WIDGET_JS = """\
export function mount(root, data) {
  root.querySelector(".widget-body").textContent = `${data.label}: ${data.dot}`;
}
"""

INDEX = "---\ntitle: 首页\nkind: index\n---\n欢迎。\n"

PAGE = """\
---
title: 数字
slug: numbers
kind: explainer
summary: 一个公式、一个代码单元和一个小组件。
---
## 公式 {#formula}

$$
w_i = \\frac{e^{s_i}}{\\sum_j e^{s_j}}
$$

## 代码 {#code}

```{code-cell} python
:id: numbers
import numpy as np
rng = np.random.default_rng(7)
a, b = rng.standard_normal(100_000), rng.standard_normal(100_000)
print(repr(float(a @ b)))
```

## 组件 {#widget}

```{widget} blas-dot
seed: 3
```
"""


def write_course(content: Path, *, page: str | None = PAGE) -> Path:
    """Fill `content` (created if needed) with site.yml, index.md, the `guard_course` package and, unless None,
    the page above; returns `content`."""
    folder = content / "guard_course" / "widgets" / "blas_dot"
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        content / "site.yml": SITE_YML,
        content / "index.md": INDEX,
        content / "guard_course" / "__init__.py": INIT,
        content / "guard_course" / "widgets" / "__init__.py": "",
        folder / "__init__.py": "",
        folder / "widget.py": WIDGET_PY,
        folder / "widget.js": WIDGET_JS,
    }
    if page is not None:
        files[content / "numbers.md"] = page
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return content


__all__ = ["INDEX", "PAGE", "SITE_YML", "write_course"]
