"""Rendering a code cell: a toolbar, the server-highlighted source (readable without JavaScript; theme/js/cells.js
later swaps the <pre> for a CodeMirror editor, loaded only when the reader is about to edit or run code) and the
captured "预先算好的输出", in the same structure cells.js produces after a run in the browser."""

from __future__ import annotations

from typing import Any

from markdown_it.common.utils import escapeHtml
from pygments import format as pygments_format
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer
from pygments.token import STANDARD_TYPES
from pygments.token import Token as PygmentsToken

from ..markup_policy import in_script
from ..model import Cell, CellOutput
from .executor import PRELUDE

# The Pygments classes theme/css/base.css colours (.hl-k, .hl-s2, …). A token of any other type (names,
# punctuation, whitespace: most of the tokens) gets no <span>: it would be unstyled markup, ~40 % of the
# static code's bytes. tests/engine/test_cells.py checks this set against base.css.
STYLED_CLASSES = frozenset(
    {
        "k",
        "kn",
        "kc",
        "kd",
        "kr",
        "ow",  # keywords
        "s",
        "s1",
        "s2",
        "sd",
        "sa",
        "si",
        "se",  # strings
        "m",
        "mi",
        "mf",
        "mh",  # numbers
        "c",
        "c1",
        "cm",
        "ch",  # comments
        "nf",
        "nb",
        "bp",
        "fm",  # functions, builtins
        "o",  # operators
    }
)
_CELL_FORMATTER = HtmlFormatter(nowrap=True, classprefix="hl-")


def _css_class(ttype: Any) -> str:
    while ttype not in STANDARD_TYPES:  # a token subtype Pygments has no class for uses its parent's
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


def highlight_cell_source(code: str) -> str:
    """The cell's Python as HTML: spans (hl- classes) only on the tokens the theme colours, the rest as
    escaped text (consecutive plain tokens merge into one text run)."""
    tokens = PythonLexer(stripnl=False, ensurenl=False).get_tokens(code)
    plain = ((ttype if _css_class(ttype) in STYLED_CLASSES else PygmentsToken.Text, value) for ttype, value in tokens)
    return pygments_format(plain, _CELL_FORMATTER)


MAX_ERROR_LINES = 2000  # like the output's cap (theme/js/cells/output.js MAX_LINES): a message can be huge


def cap_lines(text: str, limit: int = MAX_ERROR_LINES) -> tuple[str, bool]:
    """(text cut to at most `limit` lines, whether it was cut)."""
    lines = text.splitlines(keepends=True)
    return ("".join(lines[:limit]), True) if len(lines) > limit else (text, False)


def held_figure(width: int, height: int) -> str:
    """What a stored figure shows until the reader nears it (`_display_html`): an empty SVG of the figure's size, so
    its box keeps the figure's proportions (`height: auto` follows the picture's own). Base64: a srcset URL may hold
    no space."""
    import base64

    svg = f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"/>'
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def _display_html(payload: str) -> tuple[str, str]:
    """A stored display chunk → (HTML inside the log, HTML of the widget area): a figure is an <img> of its
    PNG (data: URL, readable without JavaScript; the reader's run replaces it), a course widget its static
    fallback table inside a `.widget` that the page's own widget module mounts (cells/output.js)."""
    import json

    d = json.loads(payload)
    meta = d.get("meta", {})
    if d["kind"] == "image/png":
        size = "".join(
            f' {a}="{int(meta[k])}"' for a, k in (("width", "cssWidth"), ("height", "cssHeight")) if k in meta
        )
        alt = escapeHtml(str(meta.get("alt", "matplotlib 图")))
        if "src" not in d:
            return f'<img class="cell-figure" src="data:image/png;base64,{d["data"]}"{size} alt="{alt}">', ""
        # A file: the <img>'s src, loading="lazy" (so without JavaScript the browser loads it as it nears). With
        # JavaScript the <source> that matches (scripting: enabled) holds an empty picture in its place until
        # theme/js/site/lazy-figures.js removes it as the cell nears the view: Chromium's own loading="lazy" fetches
        # anything within ~1250–2500 px, which put a 40 KiB PNG into module 04's first view (issue 19).
        src = escapeHtml(d["src"])
        held = held_figure(int(meta.get("cssWidth", 1)), int(meta.get("cssHeight", 1)))
        return (
            f'<picture><source srcset="{held}" media="(scripting: enabled)" data-held>'
            f'<img class="cell-figure" src="{src}"{size} loading="lazy" decoding="async" alt="{alt}"></picture>'
        ), ""
    if d["kind"] == WIDGET_KIND:
        return "", _widget_html(json.loads(d["data"]))
    return f'<span class="cell-note">（无法显示的输出：{escapeHtml(d["kind"])}）</span>', ""


WIDGET_KIND = "application/vnd.course.widget+json"


def _pct(w: float) -> str:
    return f"{round(w * 100)}%"


def _widget_html(spec: dict) -> str:
    """A course widget a cell showed at build time (attention_core.display): a `.widget` with its data as JSON
    (the page's own widget module mounts it, like a page widget) and a static table until then."""
    import json

    name = str(spec.get("widget", ""))
    data = spec.get("data", {})
    if data.get("bars"):
        rows = "".join(
            f'<tr><th scope="row">{escapeHtml(t)}</th><td>{_pct(w)}</td></tr>'
            for t, w in zip(data["tokens"], data["row"])
        )
        table = (
            '<div class="heat-scroll"><table class="num-table">'
            f"<caption>{escapeHtml(data.get('title', ''))}（%）</caption>{rows}</table></div>"
        )
    else:
        ex = data["examples"][0]
        head = "".join(f'<th scope="col">{escapeHtml(t)}</th>' for t in ex["tokens"])
        body = "".join(
            f'<tr><th scope="row">{escapeHtml(t)}</th>' + "".join(f"<td>{_pct(w)}</td>" for w in row) + "</tr>"
            for t, row in zip(ex["tokens"], ex["weights"]["none"])
        )
        table = (
            f'<div class="heat-scroll"><table class="num-table"><caption>{escapeHtml(ex["title"])}（%）</caption>'
            f"<thead><tr><td></td>{head}</tr></thead><tbody>{body}</tbody></table></div>"
        )
    payload = in_script(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    return (
        f'<div class="widget cell-widget" data-widget="{escapeHtml(name)}"><div class="widget-body">{table}</div>'
        f'<script type="application/json" class="widget-data">{payload}</script></div>'
    )


BROWSER_ONLY_NOTE = "这个单元不在网页生成时运行，只在你的浏览器里运行：点“▶ 运行”开始。"


def _output_html(out: CellOutput | None, browser_only: bool = False) -> str:
    """The build-time output, as escaped text in the same structure cells.js produces after a run."""
    parts: list[str] = [f'<span class="cell-note">{BROWSER_ONLY_NOTE}</span>'] if browser_only else []
    widgets: list[str] = []
    if out is not None:
        for stream, text in out.chunks:
            if stream == "display":
                inline, widget = _display_html(text)
                parts.append(inline)
                widgets.append(widget)
                continue
            parts.append(f'<span class="cell-{stream}">{escapeHtml(text)}</span>')
        error_cut = False
        if out.error:
            traceback, error_cut = cap_lines(out.error["traceback"])
            parts.append(f'<span class="cell-error">{escapeHtml(traceback)}</span>')
        if out.repr is not None:
            parts.append(f'<span class="cell-result">{escapeHtml(out.repr)}</span>')
        if out.truncated or error_cut:
            parts.append('<span class="cell-truncated">输出过长，已截断</span>')
    body = "".join(parts)
    label = "输出" if browser_only else "预先算好的输出"
    return (
        f'<div class="cell-output" data-origin="build"{"" if body else " data-empty"}>'
        f'<div class="cell-output-head"><span class="cell-output-label">{label}</span>'
        f'<span class="cell-status" role="status" aria-live="polite"></span></div>'
        f'<pre class="cell-log" role="log" aria-live="polite" aria-label="输出" tabindex="0">{body}</pre>'
        + (f'<div class="cell-widgets">{"".join(widgets)}</div>' if any(widgets) else "")
        + "</div>"
    )


def render_cell(cell: Cell, first: bool) -> str:
    """One cell: a toolbar, the highlighted source (the editor replaces it), the build-time output."""
    code_html = highlight_cell_source(cell.code)
    n_lines = cell.code.count("\n")
    attrs = [
        f'id="{escapeHtml(cell.element_id)}"',
        f'data-cell-id="{escapeHtml(cell.id)}"',
        f'data-source-hash="{cell.source_hash}"',
        f'style="--cell-lines: {n_lines}"',
    ]
    attrs += [
        a
        for a, on in (
            ("data-hide", cell.hide),
            ("data-readonly", cell.readonly),
            ("data-expect-error", cell.expect_error),
            ("data-browser-only", cell.browser_only),
        )
        if on
    ]
    label = "准备代码" if cell.hide else "代码单元"
    toolbar = (
        '<div class="cell-toolbar" role="group" aria-label="代码单元操作">'
        f'<span class="cell-name" aria-hidden="true">{label} · <code>{escapeHtml(cell.id)}</code></span>'
        '<span class="cell-modified" hidden>已修改</span>'
        '<button type="button" class="cell-btn cell-run" data-action="run" disabled '
        'title="运行（Ctrl/⌘ + Enter）" aria-keyshortcuts="Control+Enter Meta+Enter">▶ 运行</button>'
        '<button type="button" class="cell-btn cell-stop" data-action="stop" disabled hidden>■ 停止</button>'
        '<button type="button" class="cell-btn cell-reset" data-action="reset" disabled '
        'title="恢复作者的原始代码">↺ 重置</button>'
        "</div>"
    )
    # Focusable (tabindex): the reader can scroll it with the keyboard and run it with Ctrl/⌘+Enter before
    # the editor has loaded; cells.js adds the key handling and later swaps this <pre> for CodeMirror.
    # role="group": a bare <pre> may not carry a name (ARIA in HTML).
    source = (
        f'<div class="cell-editor"><pre class="cell-source" role="group" tabindex="0" '
        f'aria-label="Python 代码（单元 {escapeHtml(cell.id)}）"><code class="language-python">'
        f"{code_html}</code></pre></div>"
    )
    notice = '<div class="cell-notice" role="status" hidden></div>'
    inner = toolbar + notice + source + _output_html(cell.output, cell.browser_only)
    if cell.hide:
        inner = (
            f'<details class="cell-setup"><summary>准备代码（已折叠；运行下方单元前会自动执行）</summary>'
            f"{inner}</details>"
        )
    # A named region (a <div role="region">, not a <section>: a section without a heading is invalid).
    html = (
        f'<div class="code-cell" role="region" {" ".join(attrs)} aria-label="{label} {escapeHtml(cell.id)}">'
        f"{inner}</div>\n"
    )
    if first:
        bar = (
            '<div class="cells-bar" role="group" aria-label="本页代码">'
            f'<button type="button" class="cell-btn cells-run-all" data-action="run-all" disabled>▶▶ 全部运行</button>'
            '<span class="cells-bar-status" role="status" aria-live="polite">'
            "本页代码已在网页生成时运行过，下方显示的是预先算好的输出；"
            "点击“运行”即可在浏览器中重新执行（首次需加载 Python 运行环境）。</span>"
            f'<script type="text/plain" class="cells-prelude">{escapeHtml(PRELUDE)}</script>'
            "</div>\n"
        )
        html = bar + html
    return html
