"""Code cells, build side: option checks, build-time execution and its outputs, errors as path:line,
the output cache, and the NumPy autocomplete data.

The fixture file tests/engine/fixtures/code_cell.md uses the same format as the other plugin fixtures:
title / `.` / Markdown / `.` / expected / `.`, where expected lines are `CONTAINS <html>` or
`ERROR <path:line: message>` (a trailing `*` matches any rest; a leading `*` any start).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from builder import cells
from builder.bundle import browser_data_prefix
from builder.model import Cell
from builder.runtime import completions_script
from tests.conftest import ROOT, build
from tests.plugin_harness import render_page as render_body

# ----------------------------------------------------------------------------------- the executor itself


def test_last_expression_is_evaluated_like_ipython() -> None:
    ns: dict = {}
    first = cells.execute_cell("a = [1, 2]\nprint('x')\nlen(a)\n", "<cell-t>", ns)
    assert first["chunks"] == [["stdout", "x\n"]]
    assert first["repr"] == "2" and first["error"] is None
    assert cells.execute_cell("a.append(3)\n", "<cell-u>", ns)["repr"] is None  # statement → no result
    assert cells.execute_cell("None\n", "<cell-v>", ns)["repr"] is None
    assert cells.execute_cell("a\n", "<cell-w>", ns)["repr"] == "[1, 2, 3]"


def test_numpy_arrays_are_repr_d_as_numpy_prints_them_under_the_prelude() -> None:
    ns: dict = {}
    exec(cells.PRELUDE, {})
    out = cells.execute_cell("import numpy as np\nnp.linspace(0, 1, 3)\n", "<cell-n>", ns)
    assert out["repr"] == repr(np.linspace(0, 1, 3))
    assert np.get_printoptions()["precision"] == 8 and np.get_printoptions()["threshold"] == 1000


def test_error_reports_the_innermost_line_of_the_raising_cell() -> None:
    ns: dict = {}
    cells.execute_cell("def f():\n    return 1 / 0\n", "<cell-def>", ns)
    out = cells.execute_cell("x = 1\ny = f()\n", "<cell-call>", ns)
    err = out["error"]
    assert err["type"] == "ZeroDivisionError"
    assert err["line"] == 2  # the call in *this* cell; the division lives in <cell-def>
    assert 'File "<cell-def>", line 2, in f' in err["traceback"]
    assert "builder" not in err["traceback"]  # frames of the executor are trimmed


def test_output_is_capped_and_marked_truncated() -> None:
    out = cells.execute_cell("for i in range(5000):\n    print(i)\n", "<cell-big>", {})
    text = "".join(t for _, t in out["chunks"])
    assert out["truncated"] is True
    assert text.count("\n") == cells.executor.MAX_OUTPUT_LINES
    assert text.startswith("0\n1\n2\n") and f"\n{cells.executor.MAX_OUTPUT_LINES - 1}\n" in text


# ------------------------------------------------------------------------------- whole pages with cells

PAGE = """## 节

```{{code-cell}} python
:id: first
import numpy as np
v = np.arange(4)
print("{marker}")
```

```{{code-cell}} python
:id: second
v * 2
```
"""


def render_page(text: str, cache_dir: Path | None):
    """Parse, run, render one page body with the real stages and a chosen cell cache → (html, problems, facts)."""
    return render_body(text, rel="content/t.md", body_line=3, cache_dir=cache_dir, planned=[])


def count_executions(monkeypatch) -> list:
    """Count the page runs, in whichever runtime the build uses (Pyodide under Node, or CPython)."""
    calls: list = []
    for name in ("run_cells_in_child", "run_cells_in_pyodide"):
        real = getattr(cells.run, name)
        monkeypatch.setattr(cells.run, name, lambda *a, _real=real, **k: calls.append(1) or _real(*a, **k))
    return calls


@pytest.mark.slow
def test_outputs_are_cached_by_content_and_earlier_cells(tmp_path, monkeypatch) -> None:
    calls = count_executions(monkeypatch)
    html, problems, facts = render_page(PAGE.format(marker="第一次"), tmp_path)
    assert problems == [] and len(calls) == 1
    assert "第一次" in html and "array([0, 2, 4, 6])" in html
    assert facts.features == {"cells"} and {"cell-first", "cell-second"} <= facts.extra_ids

    again, _, _ = render_page(PAGE.format(marker="第一次"), tmp_path)
    assert again == html and len(calls) == 1  # warm: nothing executed

    # Changing the first cell invalidates both (the second depends on the namespace the first built).
    changed, _, _ = render_page(PAGE.format(marker="第二次"), tmp_path)
    assert len(calls) == 2 and "第二次" in changed and "array([0, 2, 4, 6])" in changed


def test_cache_keys_chain_over_earlier_cells() -> None:
    def cell(cid: str, code: str) -> Cell:
        return Cell(token=None, id=cid, code=code, code_offset=1)  # type: ignore[arg-type]

    env = cells.CellEnvironment()
    a, b = cells.cache_keys([cell("a", "x = 1\n"), cell("b", "x\n")], env)
    a2, b2 = cells.cache_keys([cell("a", "x = 2\n"), cell("b", "x\n")], env)
    assert a != a2 and b != b2
    assert cells.cache_keys([cell("a", "x = 1\n")], env) == [a]


@pytest.mark.slow
def test_failures_are_not_cached(tmp_path, monkeypatch) -> None:
    calls = count_executions(monkeypatch)
    body = "```{code-cell} python\n:id: bad\nraise RuntimeError('x')\n```\n"
    for _ in range(2):
        _, problems, _ = render_page(body, tmp_path)
        assert problems and problems[0].startswith("content/t.md:6: code cell 'bad' raised RuntimeError: x")
    assert len(calls) == 2  # executed again: the failure was not cached


@pytest.mark.slow
def test_a_runaway_cell_is_stopped_with_a_clear_error(monkeypatch) -> None:
    monkeypatch.setattr(cells.executor, "CELL_TIMEOUT_S", 1.0)
    _, problems, _ = render_page("```{code-cell} python\n:id: spin\nwhile True:\n    pass\n```\n", None)
    assert problems == [
        "content/t.md:4: code cell 'spin' did not finish within 1 s (infinite loop?); the build stopped it [cell]"
    ]


@pytest.mark.slow
def test_a_crashing_process_is_reported() -> None:
    _, problems, _ = render_page("```{code-cell} python\n:id: die\nimport os\nos._exit(3)\n```\n", None)
    assert len(problems) == 1
    what = "Pyodide" if "Pyodide" in problems[0] else "Python"  # the build runs cells in Pyodide under Node
    assert problems == [
        f"content/t.md:4: code cell 'die' ended the {what} process with exit(3) (os._exit?): a build-time cell must "
        "let Python finish; raise an exception to stop it on purpose [cell]"
    ]


@pytest.mark.slow
def test_user_output_written_to_the_real_stdout_cannot_break_the_protocol() -> None:
    html, problems, _ = render_page("```{code-cell} python\nimport os\nos.write(1, b'{not json\\n')\n'ok'\n```\n", None)
    assert problems == [] and "<span class=\"cell-result\">'ok'</span>" in html


def test_site_build_links_the_editor_only_on_pages_with_cells(make_content, tmp_path) -> None:
    make_content("cells.md", "---\ntitle: 单元\nslug: cells-page\n---\n" + PAGE.format(marker="嗨"))
    out = tmp_path / "site"
    build(make_content.dir, out)
    html = (out / "cells-page.html").read_text("utf-8")
    tag = re.search(
        r'<script src="assets/cells\.js\?v=\w+" data-controller="(assets/cells-page\.js\?v=\w+)" '
        r'data-editor="(assets/editor\.js\?v=\w+)" '
        r'data-completions="(assets/numpy-completions\.js\?v=\w+)" defer>',
        html,
    )
    assert tag, "the small cells.js is linked, with the URLs of the lazily loaded controller, editor and completions"
    for url in tag.groups():
        assert (out / url.split("?")[0]).is_file()
        assert f'src="{url}"' not in html, "the controller, the editor and the completions are never loaded up front"
    eager, controller, lazy = (
        (out / "assets" / name).stat().st_size for name in ("cells.js", "cells-page.js", "editor.js")
    )
    # CodeMirror lives in the editor only; the controller holds the cells' and the exercises' (cells/exercise.js)
    assert eager < 4_000 < controller < 36_000 < lazy, (eager, controller, lazy)
    assert "cells.js" not in (out / "index.html").read_text("utf-8")


def test_static_code_spans_only_the_tokens_the_theme_colours() -> None:
    """Unstyled spans (names, punctuation) are dropped; the text and every coloured token are kept."""
    css = (ROOT / "theme" / "css" / "base.css").read_text("utf-8")
    assert cells.render.STYLED_CLASSES == set(re.findall(r"\.hl-(\w+)", css))
    code = "import numpy as np\n\ndef f(x, y=2.5):  # 注释 <b>\n    return np.exp(x) @ y if x is not None else 'a<b>'\n"
    html = cells.highlight_cell_source(code)
    used = set(re.findall(r'<span class="hl-(\w+)">', html))
    assert used and used <= cells.render.STYLED_CLASSES
    assert {"kn", "k", "nf", "mf", "c1", "o", "ow", "kc", "s1"} <= used
    assert html.count("<span") == html.count("</span>")
    text = re.sub(r"</?span[^>]*>", "", html)
    assert (
        "<b>" not in text
        and text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&quot;", '"')
        .replace("&amp;", "&")
        == code
    )


# ----------------------------------------------------------------------------------------- completions


TINY_PACKAGE = '''"""A browser package of a test course."""


def softmax(x, temperature=1.0):
    """Weights that add up to one."""
    return x
'''


def test_completions_list_numpy_members_with_signatures_and_docs(tmp_path) -> None:
    package = tmp_path / "src" / "tinycourse_maths"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(TINY_PACKAGE, encoding="utf-8")
    script = completions_script([package], tmp_path).decode("utf-8")
    prefix = browser_data_prefix("editor", "completions")
    assert script.startswith(prefix)
    data = json.loads(script[len(prefix) :].rstrip().rstrip(";"))
    assert data["numpy"] == np.__version__
    numpy_members = {m["name"]: m for m in data["modules"]["numpy"]}
    assert numpy_members["linalg"]["kind"] == "namespace"
    zeros = numpy_members["zeros"]
    assert zeros["kind"] == "function" and zeros["sig"].startswith("(shape")
    assert zeros["doc"].startswith("Return a new array")  # the summary, not the leading call signature
    assert "norm" in {m["name"] for m in data["modules"]["numpy.linalg"]}
    assert "default_rng" in {m["name"] for m in data["modules"]["numpy.random"]}
    assert "normal" in {m["name"] for m in data["classes"]["numpy.random.Generator"]}
    assert {m["name"]: m["sig"] for m in data["modules"]["tinycourse_maths"]} == {"softmax": "(x, temperature=1.0)"}
    assert not any(m["name"].startswith("_") for m in data["modules"]["numpy"])
    assert " at 0x" not in script  # no object addresses: the same numpy gives the same bytes in every build
    assert numpy_members["errstate"]["sig"].startswith("(*, call=<numpy._core._ufunc_config._unspecified object>")
    # cached: a second call returns the same bytes from the build cache, <cache>/build.sqlite
    assert (tmp_path / "build.sqlite").is_file()
    assert completions_script([package], tmp_path).decode("utf-8") == script


@pytest.mark.slow
def test_a_huge_build_time_error_message_is_capped_like_the_output() -> None:
    body = (
        "```{code-cell} python\n:id: huge\n:expect-error:\n"
        'raise ValueError("\\n".join(str(i) for i in range(5000)))\n```\n'
    )
    html, problems, _ = render_body(body)
    assert problems == []
    error = re.search(r'<span class="cell-error">(.*?)</span>', html, re.S).group(1)
    assert error.count("\n") == 2000 and "\n1990\n" in error and "\n4999" not in error
    assert html.count('class="cell-truncated"') == 1
