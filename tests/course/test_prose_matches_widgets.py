"""What the prose says about a widget or a code cell is what the reader finds there (issue 18, point 6)."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from attention_core import causal_mask, get_example, multi_head_attention
from builder.course import load_course
from builder.model import BuildOptions
from builder.widgets.block import prepare_widget
from builder.widgets.fallback import percent_row
from builder.widgets.quote import quote_named
from tests.conftest import CONTENT, ROOT, TEST_CACHE, all_widgets
from tests.plugin_harness import render_snippet

PAGES = sorted((ROOT / "content").glob("*.md"))
ROLE_RE = re.compile(r"\{data\}`([^`]+)`")


def test_every_quoted_number_is_the_widgets_own() -> None:
    """Each {data} role of the course resolves (no build problem) to the percent the widget's row shows,
    recomputed here from attention_core for the multi-head roles."""
    roles = [(page, m.group(1)) for page in PAGES for m in ROLE_RE.finditer(page.read_text(encoding="utf-8"))]
    assert roles, "the course quotes no widget number through {data}"
    # the roles of one widget on one page are rendered together, with that widget once (module 04 quotes 65)
    by_widget: dict[tuple[Path, str], list[str]] = {}
    for page, spec in roles:
        by_widget.setdefault((page, spec.split()[0]), []).append(spec)
    checked = 0
    prepared: dict[tuple[str, str], dict] = {}
    for (page, kind), specs in by_widget.items():
        text = page.read_text(encoding="utf-8")
        blocks = re.findall(rf"```\{{widget\}} {kind}\n(.*?)```", text, re.S)
        assert blocks, f"{page.name}: {specs[0]} has no {kind} widget on its page"
        quoting = "".join(f"{{data}}`{spec}`\n\n" for spec in specs)
        widgets = "".join(f"```{{widget}} {kind}\n{block}```\n\n" for block in blocks)
        html, problems = render_snippet(quoting + widgets)
        assert problems == []
        quotes = re.findall(r'<span class="widget-quote">([^<]+)</span>', html)
        assert len(quotes) == len(specs), (page.name, kind)
        datas = [json.loads(d) for d in re.findall(r'class="widget-data">(.*?)</script>', html, re.S)]
        for spec, quoted in zip(specs, quotes):
            # several widgets of a kind on a page: the role's number comes from the first that names it
            name = " ".join(spec.split()[1:])
            at = next((i for i, d in enumerate(datas) if name in d.get("quotes", {})), 0)
            check_quote(kind, blocks[at], spec, quoted, datas[at], prepared)
            checked += 1
    assert checked == len(roles)


def check_quote(kind: str, block: str, spec: str, quoted: str, data: dict, prepared: dict) -> None:
    """One role's quoted text against the widget's own numbers."""
    if "quotes" in data:  # a widget that names its numbers (qkv-explained): the role shows exactly that entry
        assert quoted == data["quotes"][" ".join(spec.split()[1:])], spec
        return
    widget = all_widgets()[kind]
    named = widget.quote is quote_named or (widget.quote is not None and not re.fullmatch(r"[\d.]+%?", quoted))
    if named:  # named numbers the page does not embed (module 04's MLP, module 05's head search)
        if (kind, block) not in prepared:
            found: list[str] = []
            build = BuildOptions(root=ROOT, content_dir=CONTENT, cache_dir=TEST_CACHE)
            prepared[kind, block] = prepare_widget(
                kind, block, lambda message, line: found.append(message), 1, build=build, course=course_of_content()
            ).data
            assert found == [], (kind, found)
        selectors = spec.split()[1:]
        assert quoted == widget.quote(prepared[kind, block], selectors[:-1], selectors[-1]), spec
        return
    match = re.fullmatch(r"(\d+(?:\.\d)?)%?", quoted)  # sizes (576) have no %; one decimal: the step calculator
    assert match, (spec, quoted)
    shown = match.group(1)
    if kind == "multi-head":
        head, pair = int(spec.split()[1][1:]), spec.split()[2]
        ex = get_example("multi-head")
        mask = causal_mask(ex.length) if ex.causal else None
        _, weights = multi_head_attention(ex.X, ex.W_Q, ex.W_K, ex.W_V, ex.W_O, ex.num_heads, mask=mask)
        query, key = (ex.tokens.index(w) for w in pair.split("→"))
        assert int(shown) == percent_row(list(weights[head][query]))[key], spec


@functools.cache
def course_of_content():
    return load_course(CONTENT, ROOT)


def test_the_multi_head_prose_describes_the_widget_as_it_is() -> None:
    text = (ROOT / "content" / "module-05-attention.md").read_text(encoding="utf-8")
    before = text.split("```{widget} multi-head")[0].rstrip().rsplit("\n", 1)[-1]
    assert "逐个切换" not in before  # the widget shows every head at once; nothing switches heads
    assert "高亮" in before and "并排" in before


def test_a_small_experiment_names_the_one_place_to_change() -> None:
    """`把 `A` 换成/改成 `B`` in prose: A occurs once in the cell before it, or the sentence quotes the one line
    of that cell that holds it."""
    found = 0
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"把[^。]*?`([^`]+)`[^。`]*?(?:换成|改成)\s*`([^`]+)`", text):
            found += 1
            cells = re.findall(r"```\{code-cell\} python\n(.*?)```", text[: m.start()], re.S)
            assert cells, f"{page.name}: an instruction with no code cell before it"
            cell = cells[-1]
            target = m.group(1)
            if cell.count(target) == 1:
                continue
            sentence = text[text.rfind("\n", 0, m.start()) : m.end()]
            quoted = [q for q in re.findall(r"`([^`]+)`", sentence) if target in q and q != target]
            assert any(sum(line.count(q) for line in cell.splitlines()) == 1 for q in quoted), (
                f"{page.name}: `{target}` occurs {cell.count(target)} times in the cell; say which one"
            )
    assert found


def test_the_explainer_qualifies_interpretability_with_module_05s_warning() -> None:
    text = (ROOT / "content" / "attention-explained.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        if re.search(r"可解读|可解释|可观察", line):
            assert "module-05-attention.html#not-understanding" in line or "不能直接当作解释" in line, line
