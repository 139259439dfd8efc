"""Issue 34, items 3 and 4: nothing silent, and every message at the right `path:line`.

Mistakes that built with exit 0 are errors now (or a warning where the build can do the right thing itself), each
at the line that holds it; messages that named the wrong line or a runtime's stack name the author's line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.cells import executor
from tests.conftest import ROOT, BuildFailed, build
from tests.engine.guard_course import write_course

SITE = "series: 测试系列\ntitle: 测试课程\nkinds:\n  explainer: {title: 讲解}\n"
INDEX = "---\ntitle: 首页\nkind: index\n---\n欢迎。\n"
FIGURE = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><title>图</title><desc>一张图</desc>'
    '<rect width="4" height="4"/></svg>'
)
QUIZ_TAIL = "  - text: 不对\n"


def problems_of(content: Path, out: Path) -> list[str]:
    with pytest.raises(BuildFailed) as info:
        build(content, out, cache_dir=None)
    return [str(p) for p in info.value.problems.sorted()]


@pytest.fixture
def content(tmp_path: Path) -> Path:
    folder = tmp_path / "content"
    folder.mkdir()
    (folder / "site.yml").write_text(SITE, encoding="utf-8")
    (folder / "index.md").write_text(INDEX, encoding="utf-8")
    return folder


def write(content: Path, name: str, text: str | bytes) -> Path:
    path = content / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def front(body: str, **meta: str) -> str:
    lines = "".join(f"{k}: {v}\n" for k, v in {"title": "页面", "slug": "page", **meta}.items())
    return f"---\n{lines}---\n{body}"


# ------------------------------------------------------------------------------------------ item 3: nothing silent

DUPLICATE = "(already set {n} line{s} above; YAML would silently keep only the last)"


def dup(key: str, n: int) -> str:
    return f"duplicate key '{key}' " + DUPLICATE.format(n=n, s="s" if n != 1 else "")


def test_a_key_given_twice_is_an_error_in_every_yaml_the_build_reads(tmp_path):
    content = write_course(tmp_path / "content", page=None)
    write(content, "site.yml", (content / "site.yml").read_text(encoding="utf-8") + "title: 又一个标题\n")
    a = write(content, "a.md", "---\ntitle: 甲\nslug: a\ntitle: 乙\n---\n正文\n")
    b = write(
        content,
        "b.md",
        "---\ntitle: 页面\nslug: b\n---\n```{quiz}\nid: q\nquestion: 哪个？\noptions:\n  - text: 对\n"
        "    correct: true\n    correct: false\n" + QUIZ_TAIL + "```\n\n```{widget} blas-dot\nseed: 1\nseed: 2\n```\n\n"
        "```{figure} figures/f.svg\ncaption: 一\ncaption: 二\n```\n",
    )
    write(content, "figures/f.svg", FIGURE)
    write(content, "glossary.yml", "- term: 注意力\n  definition: 一\n  definition: 二\n")
    problems = problems_of(content, tmp_path / "site")
    assert f"{content / 'site.yml'}:8: invalid YAML: {dup('title', 6)} [front-matter]" in problems
    assert any(
        p.startswith(f"{content / 'glossary.yml'}:3: not valid YAML:") and dup("definition", 1) in p for p in problems
    ), problems
    # once site.yml is broken the pages are not looked at: the rest with a sound site.yml
    write_course(content, page=None)
    problems = problems_of(content, tmp_path / "site")
    assert f"{content / 'glossary.yml'}:3: not valid YAML" in " ".join(problems)
    (content / "glossary.yml").unlink()
    problems = problems_of(content, tmp_path / "site")
    assert problems == [f"{a}:4: invalid YAML: {dup('title', 2)} [front-matter]"]  # the load stage stops here
    a.unlink()
    problems = problems_of(content, tmp_path / "site")
    assert problems == [
        f"{b}:11: quiz is not valid YAML: {dup('correct', 1)} [quiz]",
        f"{b}:17: widget options are not valid YAML: {dup('seed', 1)} [widget]",
        f"{b}:22: figure options are not valid YAML: {dup('caption', 1)} [figure]",
    ]


def test_no_index_page_is_an_error(content, tmp_path):
    (content / "index.md").unlink()
    write(content, "page.md", front("正文\n"))
    assert problems_of(content, tmp_path / "site") == [
        f"{content / 'index.md'}: missing: every page links to the home page index.html (the course title in the "
        "header, the 404 page); write content/index.md with `kind: index` [nav]"
    ]


def test_a_second_index_and_a_page_that_is_its_own_neighbour_are_errors(content, tmp_path):
    second = write(content, "second.md", front("正文\n", slug="second", kind="index"))
    loop = write(content, "loop.md", front("正文\n", slug="loop", prev="loop", next="loop"))
    assert problems_of(content, tmp_path / "site") == [
        f"{loop}:4: prev: 'loop' is this page itself: name the page that comes before it, or remove `prev:` [nav]",
        f"{loop}:5: next: 'loop' is this page itself: name the page that comes after it, or remove `next:` [nav]",
        f"{second}:4: a second index page: only the home page (content/index.md, slug `index`) has `kind: index`; "
        "give this page the kind of its section [nav]",
    ]


def test_a_numbered_kind_without_its_number_is_an_error(tmp_path):
    content = tmp_path / "content"
    write(content, "site.yml", "series: s\ntitle: t\nkinds:\n  module: {title: 模块, numbered: true}\n")
    write(content, "index.md", INDEX)
    page = write(content, "page.md", front("正文\n", kind="module"))
    assert problems_of(content, tmp_path / "site") == [
        f"{page}:4: a 'module' page has a number: add `module: <n>` to its front matter [front-matter]"
    ]


def test_blocks_left_open_are_errors_at_their_first_line(content, tmp_path):
    callout = write(
        content, "callout.md", front("正文\n\n::: note 标题\n里面\n\n## 后面的一节\n更多\n", slug="callout")
    )
    fence = write(
        content,
        "fence.md",
        front(
            "> ::: key\n> 引用里的框\n\n:::: compare\n::: note\n甲\n:::\n::::\n\n- 项\n\n  ```python\n  x = 1\n",
            slug="fence",
        ),
    )
    closed = write(
        content,
        "closed.md",
        front(
            ":::: compare\n::: key 一\n甲\n:::\n::: note\n乙\n:::\n::::\n\n> ```\n> 引\n> ```\n\n~~~~\nx\n~~~~~\n",
            slug="closed",
        ),
    )
    problems = problems_of(content, tmp_path / "site")
    assert problems == [
        f'{callout}:7: the callout "::: note 标题" opened here is never closed: the 4 lines after it, to the end of '
        'the page, would disappear into it; close it with a line ":::" [directive]',
        f'{fence}:5: the callout "::: key" opened here is never closed: the 1 line after it, to the end of the '
        'enclosing list or quote, would disappear into it; close it with a line ":::" [directive]',
        f'{fence}:16: the fence "```python" opened here is never closed: the 1 line after it, to the end of the '
        'page, would disappear into it; close it with a line "```" [directive]',
    ]
    assert str(closed) not in " ".join(problems)


def test_ids_the_theme_uses_are_reserved(content, tmp_path):
    write(content, "figures/taken.svg", FIGURE.replace("<rect", '<rect id="course-data"'))
    page = write(
        content,
        "page.md",
        front(
            '## 进度 {#course-data}\n\n<div id="main">块</div>\n\n<span id="widget-1">x</span>\n\n'
            "```{figure} figures/taken.svg\n```\n"
        ),
    )
    assert problems_of(content, tmp_path / "site") == [
        f"{page}:5: heading id 'course-data' is taken by the course data the page's progress reads "
        "(templates/base.html): give this heading another id [heading]",
        f"{page}:7: raw HTML: <div> id 'main' is taken by the page's main content (templates, skip link): give this "
        "element another id [html]",
        f"{page}:9: raw HTML: <span> id 'widget-1' is taken by the page's widgets (widget-1, widget-1-title, …): "
        "give this element another id [html]",
        f"{page}:11: figures/taken.svg: <rect> id 'course-data' is taken by the course data the page's progress "
        "reads (templates/base.html): give this element another id [figure]",
    ]


def test_an_automatic_heading_id_the_theme_uses_is_renamed_with_a_warning(content, tmp_path):
    write(content, "page.md", front("## Main\n\n正文\n"))
    result = build(content, tmp_path / "site", cache_dir=None)
    assert [str(w).split(": warning: ")[1] for w in result.warnings] == [
        "heading id 'main' would be one the theme uses (the page's main content (templates, skip link)); this "
        "heading gets 's-main' (give it an explicit id: `## 标题 {#my-id}`) [heading]"
    ]
    html = (tmp_path / "site" / "page.html").read_text(encoding="utf-8")
    assert html.count('id="main"') == 1 and 'id="s-main"' in html


def test_every_id_the_theme_and_the_renderers_write_is_reserved():
    import re

    from builder.reserved_ids import reserved_id

    literal = re.compile(r"""\bid=["']([A-Za-z][\w-]*)["']|\.id = [`"']([A-Za-z][\w-]*)[`"']""")
    templated = re.compile(r"""\bid=["']([A-Za-z][\w-]*?)(?:\{\{|\$\{)|\.id = `([A-Za-z][\w-]*?)\$\{""")
    found = set()
    for path in [*(ROOT / "theme" / "templates").rglob("*.html"), *(ROOT / "theme" / "js").rglob("*.js")]:
        text = path.read_text(encoding="utf-8")
        found |= {a or b for a, b in literal.findall(text)}
        found |= {(a or b) + "1" for a, b in templated.findall(text)}  # a prefix: reserved with what follows
    found |= {"widget-1", "widget-1-title", "cell-x", "cell-widget-1", "quiz-q", "quiz-q-q", "gloss-1"}
    found |= {"katex-path-1", "live-build-problems"}
    assert found, "no id found in the theme"
    assert sorted(i for i in found if reserved_id(i) is None) == []


def test_an_oversized_formula_is_an_error(content, tmp_path):
    page = write(content, "page.md", front("正文\n\n$\\rule{100000em}{1em}$ 和 $a\\hspace{50em}b$ 和 $x^2$\n"))
    reason = (
        "a size in the formula is larger than 30em (\\rule, \\hspace, \\kern, \\raisebox, …): one formula would "
        "cover the page; make it smaller [math]"
    )
    assert problems_of(content, tmp_path / "site") == [
        f"{page}:7: KaTeX cannot typeset `\\rule{{100000em}}{{1em}}`: {reason}",
        f"{page}:7: KaTeX cannot typeset `a\\hspace{{50em}}b`: {reason}",
    ]


def test_control_characters_in_a_page_are_errors_at_their_line(content, tmp_path):
    page = write(content, "page.md", front("正文\n颜色 \x1b[31m红\n"))
    assert problems_of(content, tmp_path / "site") == [
        f"{page}:6: control character U+001B (ESC) at column 4: no editor shows it and HTML forbids it; delete it "
        "[front-matter]"
    ]


def test_control_characters_a_cell_prints_are_shown_as_symbols_with_a_warning(content, tmp_path):
    write(content, "page.md", front('```{code-cell} python\n:id: ctl\nprint("a\\x00b\\x1b[31mc")\n```\n'))
    result = build(content, tmp_path / "site", cache_dir=None)
    html = (tmp_path / "site" / "page.html").read_text(encoding="utf-8")
    assert "a\u2400b\u241b[31mc" in html
    assert "\x00" not in html and "\x1b" not in html
    assert [str(w).split(": warning: ")[1] for w in result.warnings] == [
        "code cell 'ctl' printed control characters (U+0000 (NUL), U+001B (ESC)), which HTML cannot hold: the page "
        "shows each as its symbol (␀, ␛, …) [cell]"
    ]


def test_a_file_in_another_encoding_names_the_line_of_its_first_bad_byte(content, tmp_path):
    gbk = "正文第二行：你好\n".encode("gbk")
    page = write(content, "page.md", "---\ntitle: 页面\nslug: page\n---\n正文\n".encode() + gbk)
    tail = "; the file seems to be in another encoding (GBK, Latin-1, …): save it as UTF-8"
    assert problems_of(content, tmp_path / "site") == [
        f"{page}:6: not valid UTF-8: byte d5 at column 1 (invalid continuation byte){tail} [front-matter]"
    ]
    page.write_text(front("```{figure} figures/f.svg\n```\n"), encoding="utf-8")
    write(content, "figures/f.svg", FIGURE.replace("一张图", "一张图\n").encode() + "<!-- 注释 -->".encode("gbk"))
    (problem,) = problems_of(content, tmp_path / "site")
    assert problem.startswith(f"{page}:5: figures/f.svg line 2: not valid UTF-8: byte ") and problem.endswith(
        f"{tail} [figure]"
    )
    page.unlink()
    write(content, "site.yml", "series: 测试\n".encode() + "title: 课程\n".encode("gbk"))
    assert problems_of(content, tmp_path / "site") == [
        f"{content / 'site.yml'}:2: not valid UTF-8: byte bf at column 8 (invalid start byte){tail} [site.config]"
    ]


def test_content_from_outside_the_content_folder_is_refused_the_same_way(content, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(front("秘密\n", slug="secret"), encoding="utf-8")
    (outside / "f.svg").write_text(FIGURE, encoding="utf-8")
    os.symlink(outside / "secret.md", content / "secret.md")
    (content / "figures").mkdir()
    os.symlink(outside / "f.svg", content / "figures" / "f.svg")
    os.symlink(outside / "f.svg", content / "figures" / "g.svg")
    page = write(content, "page.md", front("```{figure} figures/f.svg\n```\n\n![图](figures/g.svg)\n"))
    how = "outside the content folder"
    assert problems_of(content, tmp_path / "site") == [
        f"{content / 'secret.md'}: cannot read the page: it is a symbolic link to {outside / 'secret.md'}, {how} "
        f"{content}/: the build reads only files inside it (copy the file in instead) [front-matter]",
    ]
    (content / "secret.md").unlink()
    assert problems_of(content, tmp_path / "site") == [
        f"{page}:5: figures/f.svg: it is a symbolic link to {outside / 'f.svg'}, {how}: the build reads only files "
        "inside it (copy the file in instead) [figure]",
        f"{page}:8: image 'figures/g.svg': it is a symbolic link to {outside / 'f.svg'}, {how}: the build reads "
        "only files inside it (copy the file in instead) [image]",
    ]


# ------------------------------------------------------------------------------------------ item 4: the right line


def test_problems_in_quiz_strings_callout_titles_and_captions_name_their_own_line(content, tmp_path):
    write(content, "figures/f.svg", FIGURE)
    page = write(
        content,
        "page.md",
        front(
            "正文\n\n```{quiz}\nid: q\nquestion: 哪个？\noptions:\n  - text: 对\n    correct: true\n"
            '  - text: "[坏](javascript:alert(1))"\n    feedback: |\n      第一行\n      ![图](https://evil.example/x.png)\n'
            "```\n\n::: note 标题 <img src=x onerror=alert(1)>\n内容\n:::\n\n"
            "```{figure} figures/f.svg\ncaption: 图 [坏](#nowhere)\n```\n"
        ),
    )
    assert problems_of(content, tmp_path / "site") == [
        f"{page}:13: link 'javascript:alert(1)': 'javascript:' URLs are not allowed (link a page of the site or an "
        "https:// address) [link]",
        f"{page}:16: image 'https://evil.example/x.png' is outside the site: save it under content/ and link it "
        "relatively [image]",
        f"{page}:19: raw HTML: event handler attribute 'onerror' is not allowed [html]",
        f"{page}:24: broken link '#nowhere': page.html has no anchor '#nowhere' [link]",
    ]


def test_formulas_in_callout_titles_and_captions_are_typeset(content, tmp_path):
    write(content, "figures/f.svg", FIGURE)
    write(
        content, "page.md", front("::: note 标题 $x^2$\n内容\n:::\n\n```{figure} figures/f.svg\ncaption: 图 $y$\n```\n")
    )
    result = build(content, tmp_path / "site", cache_dir=None)
    html = (tmp_path / "site" / "page.html").read_text(encoding="utf-8")
    assert result.formulas == 2 and "math-error" not in html and html.count('class="katex"') == 2


def test_a_content_folder_that_is_not_there_says_so(tmp_path):
    missing = tmp_path / "nowhere"
    run = subprocess.run(
        [sys.executable, "build.py", "--content", missing, "--out", tmp_path / "site", "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1
    assert run.stderr.splitlines() == [f"error: --content {missing}: no such folder"]
    assert problems_of(missing, tmp_path / "site") == [
        f"{missing}: the content folder: no such folder (--content names the folder holding site.yml and the pages) "
        "[site.config]"
    ]


@pytest.mark.slow
def test_a_cell_that_ends_the_interpreter_is_one_line(content, tmp_path):
    page = write(
        content, "page.md", front("正文\n\n```{code-cell} python\n:id: bye\nprint(1)\nimport os\nos._exit(1)\n```\n")
    )
    problems = problems_of(content, tmp_path / "site")
    assert problems == [
        f"{page}:7: code cell 'bye' ended the {what} process with exit(1) (os._exit?): a build-time cell must let "
        "Python finish; raise an exception to stop it on purpose [cell]"
        for what in (["Pyodide"] if "Pyodide" in problems[0] else ["Python"])
    ]


PYODIDE_FATAL = """\
Pyodide has suffered a fatal error. Please report this to the Pyodide maintainers.
The cause of the fatal error was:
RangeError: Maximum call stack size exceeded
    at ensureCaughtObjectIsError (/cache/pyodide/base-1/pyodide.asm.js:10:47815)
    at API.fatal_error (/cache/pyodide/base-1/pyodide.asm.js:10:49261)
    at wasm://wasm/0268cb26:wasm-function[448]:0x17594b
    at wasm://wasm/0268cb26:wasm-function[332]:0x16f1af {
  pyodide_fatal_error: true
}
SyntaxError: "undefined" is not valid JSON
    at JSON.parse (<anonymous>)
    at /repo/builder/cells/pyodide_cells.cjs:86:14
/repo/builder/cells/pyodide_cells.cjs:88
})().catch((e) => { console.error(String((e && e.stack) || e)); setTimeout(() => { throw e; }); });
                                                                                   ^

Node.js v20.20.2
"""

OOM = """\
RuntimeError: Aborted(OOM). Build with -sASSERTIONS for more info.
    at abort (/cache/pyodide/base-1/pyodide.asm.js:9:1234)
    at wasm://wasm/0268cb26:wasm-function[12]:0x1234
Node.js v20.20.2
"""


@pytest.mark.parametrize(
    ("stderr", "returncode", "said"),
    [
        (
            PYODIDE_FATAL,
            1,
            "crashed the Pyodide runtime (a fatal error in WebAssembly: RangeError: Maximum call stack "
            "size exceeded); the cell's code caused it",
        ),
        (
            OOM,
            1,
            "crashed the Pyodide process: it ran out of memory (WebAssembly gives Python at most 4 GB; a huge "
            "figure or array?): make the data or the figure smaller",
        ),
        (
            "Exit: Program terminated with exit(3)\n    at x (/a.js:1:1)\n",
            1,
            "ended the Pyodide process with exit(3) "
            "(os._exit?): a build-time cell must let Python finish; raise an exception to stop it on purpose",
        ),
        ("", -11, "crashed the Pyodide process (SIGSEGV)"),
    ],
)
def test_a_dying_runtime_is_diagnosed_in_one_line_without_its_stack(stderr, returncode, said):
    message = executor.died("Pyodide", returncode, stderr)
    assert message == said
    assert (
        "\n" not in message and "    at " not in message and "wasm://" not in message and "maintainers" not in message
    )


@pytest.mark.slow
def test_a_cell_that_kills_the_runtime_is_one_line_not_a_traceback(content, tmp_path):
    if executor.shutil.which("node") is None:
        pytest.skip("the build runs cells in Pyodide only with Node")
    page = write(
        content,
        "page.md",
        front("```{code-cell} python\n:id: boom\nimport pyodide_js\npyodide_js._api.fatal_error('x')\n```\n"),
    )
    assert problems_of(content, tmp_path / "site") == [
        f"{page}:5: code cell 'boom' crashed the Pyodide runtime (a fatal error in WebAssembly: Error: x); the cell's "
        "code caused it [cell]"
    ]
