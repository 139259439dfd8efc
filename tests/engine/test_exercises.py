"""Exercises at build time: every exercise's reference solution must pass its checks and its starter must fail one,
in the reader's runtime (Pyodide under Node, like the build's code cells), else a build error at `path:line`;
malformed blocks are errors at their line; verdicts are cached by content. And the checker itself
(builder/runtime/browser/exercise_runtime.py), in CPython: what a learner reads for each kind of failure."""

from __future__ import annotations

import json
import re

import pytest

from builder.exercises import verify
from builder.exercises.render import obfuscate
from builder.runtime.browser import exercise_runtime
from tests.conftest import BuildFailed, build

STARTER = """import math

def softmax(scores):
    return scores
"""
SOLUTION = """import math

def softmax(scores):
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    return [e / sum(exps) for e in exps]
"""
CHECKS = '''def check_sums_to_one():
    """权重加起来等于 1"""
    expect_close(sum(softmax([2.0, 1.0, 0.1])), 1.0, "和")
'''
HIDDEN = '''def check_large():
    """很大的分数"""
    expect_close(softmax([1000.0, 999.0]), softmax([1.0, 0.0]), "softmax([1000, 999])")
'''


def exercise(*, starter=STARTER, checks=CHECKS, hidden=HIDDEN, solution=SOLUTION, head=":id: softmax-list\n", hints=1):
    hint_parts = "".join(f"--- hint\n第 {i + 1} 条提示。\n" for i in range(hints))
    return (
        f"```{{exercise}} 写出 softmax\n{head}\n写一个 `softmax(scores)`。\n\n"
        f"--- starter\n{starter}\n--- checks\n{checks}\n"
        + (f"--- hidden\n{hidden}\n" if hidden else "")
        + f"--- solution\n{solution}\n{hint_parts}```\n"
    )


PAGE_HEAD = "---\ntitle: 练习\nkind: module\nmodule: 1\n---\n## 练习 {#ex}\n\n"  # the fence is on line 8


def page_with(*blocks: str) -> str:
    return PAGE_HEAD + "\n".join(blocks)


def problems_of(make_content, text: str, tmp_path) -> list[str]:
    make_content("ex.md", text)
    with pytest.raises(BuildFailed) as info:
        build(make_content.dir, tmp_path / "site", cache_dir=tmp_path / "cache")
    return [str(p) for p in info.value.problems.sorted()]


def line_of(text: str, needle: str, after: str = "") -> int:
    """1-based line of the first line equal to `needle` (after the first line equal to `after`)."""
    lines = text.split("\n")
    start = lines.index(after) if after else 0
    return lines.index(needle, start) + 1


@pytest.mark.slow
def test_a_starter_that_passes_every_check_is_rejected_at_its_first_line(make_content, tmp_path):
    text = page_with(exercise(starter=SOLUTION))
    problems = problems_of(make_content, text, tmp_path)
    line = line_of(text, "--- starter") + 1
    assert problems == [
        f"{make_content.dir / 'ex.md'}:{line}: exercise 'softmax-list': the starter code passes every check, so the "
        "checks cannot tell a solved exercise from an unsolved one: leave the starter unfinished, or add a check it "
        "fails [exercise]"
    ]


@pytest.mark.slow
def test_a_reference_that_fails_a_hidden_check_is_rejected_at_that_check(make_content, tmp_path):
    naive = SOLUTION.replace("    top = max(scores)\n", "").replace("s - top", "s")
    text = page_with(exercise(solution=naive))
    problems = problems_of(make_content, text, tmp_path)
    line = line_of(text, "def check_large():")
    assert len(problems) == 1, problems
    assert problems[0].startswith(
        f"{make_content.dir / 'ex.md'}:{line}: exercise 'softmax-list': the reference solution fails check "
        "'check_large' (line 4 of the solution): 检查调用你的代码时，第 4 行出错：OverflowError: math range error"
    )


@pytest.mark.slow
def test_a_reference_that_raises_and_one_that_gives_wrong_numbers_name_their_lines(make_content, tmp_path):
    raising = "def softmax(scores):\n    x = 1\n    raise ValueError('没写完')\n"
    wrong = "def softmax(scores):\n    return [0.5 for s in scores]\n"
    text = page_with(
        exercise(solution=raising.replace("x = 1\n    raise", "raise"), head=":id: a\n"),
        exercise(solution=raising.replace("def", "1 / 0\ndef"), head=":id: b\n"),
        exercise(solution=wrong, head=":id: c\n", hidden=""),
    )
    problems = problems_of(make_content, text, tmp_path)
    path = make_content.dir / "ex.md"
    check_a = line_of(text, "def check_sums_to_one():")
    zero_div = line_of(text, "1 / 0")
    check_c = line_of(text, "def check_sums_to_one():", after=":id: c")
    assert (
        f"{path}:{zero_div}: exercise 'b': the reference solution raised ZeroDivisionError: division by zero [exercise]"
        in problems
    )
    assert any(
        p.startswith(f"{path}:{check_a}: exercise 'a': the reference solution fails check 'check_sums_to_one' (line 2")
        and "ValueError: 没写完" in p
        for p in problems
    ), problems
    assert any(
        p.startswith(
            f"{path}:{check_c}: exercise 'c': the reference solution fails check 'check_sums_to_one': 和 的数值不对"
        )
        and "期望 1，得到 1.5" in p
        for p in problems
    ), problems


def test_malformed_blocks_are_errors_at_their_lines(make_content, tmp_path):
    text = page_with(
        exercise(head=""),
        exercise(head=":id: two\n:level: hard\n"),
        exercise(head=":id: three\n", checks="def helper():\n    pass\n"),
        exercise(head=":id: four\n", hints=5),
        exercise(head=":id: five\n", checks="def check_x(:\n    pass\n"),
        exercise(head=":id: two\n").replace("--- hidden", "--- hiden"),
        exercise(head=":id: six\n", hints=0),
    )
    problems = problems_of(make_content, text, tmp_path)
    path = make_content.dir / "ex.md"
    fences = [i + 1 for i, line in enumerate(text.split("\n")) if line.startswith("```{exercise}")]
    expected = [
        (fences[0], "exercise needs an id"),
        (line_of(text, ":level: hard"), "unknown exercise option ':level:'"),
        (line_of(text, "def helper():"), "exercise part '--- checks' defines no check"),
        (line_of(text, "--- hint", after=":id: four") + 2 * 4, "exercise has 5 hints; at most 4"),
        (line_of(text, "def check_x(:"), "exercise part '--- checks' is not valid Python"),
        (line_of(text, "--- hiden"), "unknown exercise part '--- hiden'"),
        (fences[5] + 1, "duplicate exercise id 'two'"),
        (line_of(text, "写一个 `softmax(scores)`。", after=":id: six") - 1, "exercise needs at least one '--- hint'"),
    ]
    for line, start in expected:
        assert any(p.startswith(f"{path}:{line}: {start}") for p in problems), (line, start, problems)
    assert all(p.endswith("[exercise]") for p in problems)


@pytest.mark.slow
def test_a_good_exercise_builds_into_the_page_with_its_hidden_checks_out_of_sight(make_content, tmp_path):
    make_content("ex.md", page_with(exercise()))
    build(make_content.dir, tmp_path / "site", cache_dir=tmp_path / "cache")
    html = (tmp_path / "site" / "ex.html").read_text("utf-8")
    assert 'id="exercise-softmax-list"' in html and 'data-exercise="softmax-list"' in html
    data = json.loads(re.search(r'<script type="application/json" class="exercise-data">(.*?)</script>', html).group(1))
    script = (tmp_path / "site" / data["extras"]["data"]).read_text("utf-8")  # hints, checks: loaded when needed
    assert "check_large" not in html + script and obfuscate(HIDDEN) in script  # out of sight, not secret
    assert script.count('"hints": [') == 1 and 'class="exercise-strings"' in html
    data = json.loads(re.search(r'<script type="application/json" id="course-data">(.*?)</script>', html).group(1))
    assert data["pages"][0]["exercises"] == ["softmax-list"]
    assert "assets/cells.js" in html or "cells.js" in html  # the editor and the runtime come with the cells' script


def test_verdicts_are_cached_by_content(make_content, tmp_path, monkeypatch):
    make_content("ex.md", page_with(exercise()))
    build(make_content.dir, tmp_path / "site", cache_dir=tmp_path / "cache")

    def no_run(*args, **kwargs):
        raise AssertionError("an exercise ran although its verdict was cached")

    monkeypatch.setattr(verify, "run_cells_in_pyodide", no_run)
    monkeypatch.setattr(verify, "run_cells_in_child", no_run)
    make_content("ex.md", page_with(exercise()) + "\n另一段文字：页面变了，练习没变。\n")
    build(make_content.dir, tmp_path / "site2", cache_dir=tmp_path / "cache")
    make_content("ex.md", page_with(exercise(hidden=HIDDEN.replace("999.0", "998.0"))))
    with pytest.raises(AssertionError, match="although its verdict was cached"):
        build(make_content.dir, tmp_path / "site3", cache_dir=tmp_path / "cache")


def test_the_harness_names_every_import_so_the_runtime_loads_its_package():
    code = verify.harness_code(
        "x", "import numpy as np\n", "from attention_core import softmax\n", "", ["attention_core", "numpy"]
    )
    assert code.startswith(
        'if False:\n    import attention_core\n    import numpy\n__import__("exercise_runtime").check('
    )
    assert verify.imports_of("import numpy.linalg\nfrom attention_core.core import x\nfrom . import y\n") == [
        "attention_core",
        "numpy",
    ]


# ------------------------------------------------------------------------------------------------ the checker


def verdict(code: str, checks: str, hidden: str = "") -> dict:
    return json.loads(
        repr(exercise_runtime.check(json.dumps({"id": "t", "code": code, "checks": checks, "hidden": hidden})))
    )


ARRAY_CHECK = '''import numpy as np
def check_matrix():
    """矩阵"""
    expect_close(f(), np.arange(6.0).reshape(2, 3), "f()")
'''


@pytest.mark.parametrize(
    "body,message",
    [
        ("return np.arange(6.0).reshape(3, 2)", "f() 的形状不对：期望 (2, 3)，得到 (3, 2)"),
        (
            "a = np.arange(6.0).reshape(2, 3); a[1, 2] = 7; return a",
            "第一个不同的元素在 [1, 2]：期望 5，得到 7；1 / 6 个元素不同",
        ),
        ("pass", "f() 是 None：你的函数是不是忘了 return？"),
        ("return 'abc'", "f() 应该是数字或数组，得到的是 str"),
        ("return undefined_name", "检查调用你的代码时，第 3 行出错：NameError: name 'undefined_name' is not defined"),
    ],
)
def test_a_failed_check_says_what_was_expected_and_what_came(body, message):
    v = verdict(f"import numpy as np\ndef f():\n    {body}\n", ARRAY_CHECK)
    assert not v["ok"] and v["passed"] == 0 and v["total"] == 1
    assert message in v["checks"][0]["message"]
    assert "exercise_runtime" not in json.dumps(v) and "<exercise-checks>" not in v["checks"][0]["message"]


def test_a_passing_check_shows_the_shape_and_numbers_it_compared():
    v = verdict("import numpy as np\ndef f():\n    return np.arange(6.0).reshape(2, 3)\n", ARRAY_CHECK)
    assert v["ok"] and v["checks"][0]["notes"] == ["f()：形状 (2, 3)，[0, 1, 2, 3, 4, 5] ✓"]


def test_code_that_does_not_run_names_its_own_line_and_no_check_runs():
    v = verdict("x = 1\ny = [1, 2][5]\n", ARRAY_CHECK)
    assert not v["ok"] and v["checks"] == []
    assert v["error"]["part"] == "code" and v["error"]["line"] == 2 and v["error"]["type"] == "IndexError"
    assert v["error"]["traceback"].startswith("Traceback") and "exercise_runtime" not in v["error"]["traceback"]


def test_a_name_the_checks_need_and_hidden_checks_are_labelled():
    checks = 'def check_a():\n    """用到 g"""\n    expect_equal(g(1), 2, "g(1)")\n'
    hidden = "def check_b():\n    assert False\n"
    v = verdict("def f(x):\n    return x\n", checks, hidden)
    assert v["checks"][0]["message"] == "检查要用到 `g`，但你的代码没有定义它（名字拼对了吗？）。"
    assert (
        v["checks"][1]["hidden"] and v["checks"][1]["message"] == "条件不成立。"
    )  # a hidden check's code stays unseen


def test_stop_is_not_swallowed():
    with pytest.raises(KeyboardInterrupt):
        verdict("def f():\n    raise KeyboardInterrupt\n", "def check_a():\n    f()\n")
