"""Module 07's 你来写一句 (the poem-writer widget) in Chromium, over http and file://: neither its script nor the
weights are part of the page's first view; a keystroke answers with the top next characters and every head's
attention that attention_core.tiny_gpt computes for the same text; the attention changes with the text and with the
chosen query; traditional input predicts what its simplified form predicts; a character the model does not know is
shown as such and breaks nothing; a continuation is the one NumPy's sampler draws (seed, temperature and text), so a
blank start with the table's seed is the Transformer's poem of the three-model table."""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np
import pytest

from attention_core import tiny_gpt

pytestmark = pytest.mark.e2e

PAGE = "module-07-train-transformer.html"
WIDGET = '.widget[data-widget="poem-writer"]'


@lru_cache(maxsize=1)
def model():
    from attention_course.poems import transformer_lm

    params, cfg, meta, _ = transformer_lm.load()
    return params, cfg, list(meta["vocab"])


def ids_of(text: str) -> list[int]:
    _, _, vocab = model()
    index = {ch: i for i, ch in enumerate(vocab)}
    return [0] + [index.get(ch, 1) for ch in text]


def python_top(text: str, k: int = 10) -> list[str]:
    params, cfg, vocab = model()
    p = tiny_gpt.next_char_probs(params, cfg, ids_of(text)).astype(np.float64)
    return ["◆（结束）" if j == 0 else vocab[j] for j in np.argsort(-p, kind="stable")[:k]]


def python_continuation(text: str, seed: int, temperature: float, max_new: int = 48) -> str:
    """transformer_lm.sample from the typed text instead of ◆ alone (and stopping when the context is full)."""
    params, cfg, vocab = model()
    rng = np.random.default_rng(seed)
    ids, out = ids_of(text), []
    while len(out) < max_new:
        p = tiny_gpt.next_char_probs(params, cfg, ids, temperature=temperature).astype(np.float64)
        nxt = int(rng.choice(len(p), p=p / p.sum()))
        if nxt == 0:
            break
        out.append(nxt)
        ids.append(nxt)
        if len(ids) > cfg.context:
            break
    return "".join(vocab[i] for i in out)


def open_writer(page):
    page.goto(page.base + PAGE)
    page.wait_for_load_state("load")
    late = [u for u in page.watch.requests if "widget-poem-writer.js" in u or "/assets/widgets/poem-writer-" in u]
    assert not late, "the widget's script and weights load when it nears the view, not with the page"
    root = page.locator(WIDGET)
    root.scroll_into_view_if_needed()
    page.locator(f'{WIDGET}[data-ready="true"][data-model="ready"]').wait_for(timeout=60_000)
    assert [u for u in page.watch.requests if "/assets/widgets/poem-writer-" in u], "the weights came as a data script"
    return root.locator(".widget-body")  # (not the copy of the fallback kept for print)


def type_into(page, root, text: str, *, clear: bool = True) -> None:
    box = root.get_by_label("诗的开头")
    if clear:
        box.fill("")
    box.press_sequentially(text)
    page.wait_for_function(
        "([sel, t]) => document.querySelector(sel).dataset.resultFor === t",
        arg=[WIDGET, box.input_value()],
        timeout=30_000,
    )


def shown_top(root) -> list[str]:
    return root.locator(".pw-top .bar-label").all_text_contents()


def grid(root) -> dict:
    return root.locator(".pw-grid").evaluate(
        """t => ({cols: [...t.tHead.rows[0].cells].slice(1).map(c => c.textContent),
                  rows: [...t.tBodies[0].rows].map(r => [...r.cells].slice(1).map(c => c.textContent))})"""
    )


def test_a_keystroke_answers_with_the_models_numbers(page):
    root = open_writer(page)
    first = grid(root)
    type_into(page, root, "春眠不觉晓，处处闻啼")
    top = shown_top(root)
    assert top[:5] == python_top("春眠不觉晓，处处闻啼")[:5]
    # the live summary for screen readers names the first prediction
    assert top[0] in root.locator(".widget-live").text_content()
    # every head's attention from the last character, as attention_core computes it (whole percents)
    params, cfg, _ = model()
    att = tiny_gpt.forward(params, cfg, ids_of("春眠不觉晓，处处闻啼")).attention  # (layers, heads, T, T)
    shown = grid(root)
    assert shown["cols"] == list("◆春眠不觉晓，处处闻啼")
    assert shown != first
    want = [[round(float(w) * 100) for w in att[layer, head, -1]] for layer in range(4) for head in range(4)]
    got = [[int(x) for x in row] for row in shown["rows"]]
    assert np.max(np.abs(np.array(got) - np.array(want))) <= 1  # rounding at the half-percent edge only

    # one more character: the attention shown changes with the text
    type_into(page, root, "鸟", clear=False)
    after = grid(root)
    assert after["cols"][-1] == "鸟" and after["rows"] != shown["rows"]
    assert shown_top(root)[:3] == python_top("春眠不觉晓，处处闻啼鸟")[:3]

    # another query: click a character (then the arrow keys move it); the grid shows that row
    root.locator('.pw-char[data-pos="3"]').click()
    q = grid(root)
    assert all(x == "" for row in q["rows"] for x in row[4:])  # nothing after the query (the causal mask)
    want3 = [[round(float(w) * 100) for w in att[layer, head, 3, :4]] for layer in range(4) for head in range(4)]
    assert np.max(np.abs(np.array([[int(x) for x in r[:4]] for r in q["rows"]]) - np.array(want3))) <= 1
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("document.activeElement.dataset.pos") == "2"
    assert "“眠”" in root.locator(".pw-grid-caption").text_content()


def test_traditional_input_predicts_what_its_simplified_form_does(page):
    root = open_writer(page)
    type_into(page, root, "孤舟蓑笠翁，独钓寒江")
    simplified = (shown_top(root), grid(root))
    type_into(page, root, "孤舟蓑笠翁，獨釣寒江")
    assert (shown_top(root), grid(root)) == simplified
    converted = root.locator(".pw-char.is-converted")
    assert converted.all_text_contents() == ["独", "钓"]
    assert converted.first.get_attribute("title") == "由“獨”转成简体"


def test_an_unknown_character_is_shown_as_unknown_and_breaks_nothing(page):
    root = open_writer(page)
    type_into(page, root, "咖啡馆里，")
    unknown = root.locator(".pw-char.is-unknown")
    assert unknown.count() >= 1
    assert unknown.first.get_attribute("title") == "模型没见过这个字，按 □ 处理"
    assert "模型没见过" in root.locator(".pw-status").text_content()
    assert "□" in grid(root)["cols"]
    # the unknown id, as Python encodes it (an unknown character is id 1 there too)
    assert shown_top(root)[:3] == python_top("咖啡馆里，")[:3]


def test_a_continuation_is_the_seeded_sample_of_the_build(page):
    root = open_writer(page)
    data = json.loads(page.locator(f"{WIDGET} script.widget-data").text_content())
    seed_box = root.get_by_label("随机种子")

    def write(seed: int) -> str:
        seed_box.fill(str(seed))
        root.get_by_role("button", name="续写").click()
        page.wait_for_function(
            "([sel, s]) => document.querySelector(sel + ' .widget-body .pw-poem').dataset.seed === s",
            arg=[WIDGET, str(seed)],
        )
        return root.locator(".pw-poem").get_attribute("data-added")

    # blank, the table's seed, T = 1: the Transformer's poem of the three-model table
    type_into(page, root, "")
    build = data["build_sample"]
    assert write(build["seed"]) == build["poem"]
    # from a typed start: what NumPy's generator draws from the same probabilities
    type_into(page, root, "白日依山尽，")
    poem = write(7)
    assert poem == python_continuation("白日依山尽，", 7, 1.0)
    assert write(8) != poem
    assert write(7) == poem  # same seed, temperature and text: the same poem
    root.get_by_role("button", name="放进输入框").click()
    assert root.get_by_label("诗的开头").input_value() == "白日依山尽，" + poem.replace("□", "")


@pytest.mark.parametrize("width", [1280, 390])
def test_nothing_moves_when_it_mounts(browser, http_base, width):
    """The static first view (what the page carries) takes the live view's height: mounting shifts nothing below."""
    from tests.e2e.conftest import ALL_LAID_OUT_CSS, _close_and_check, _open_context

    context, page = _open_context(browser, http_base, viewport={"width": width, "height": 900})
    page.goto(http_base + PAGE)
    page.add_style_tag(content=ALL_LAID_OUT_CSS)
    before = page.locator(WIDGET).evaluate("w => w.getBoundingClientRect().height")
    assert not page.locator(f"{WIDGET}[data-ready]").count()
    page.locator(WIDGET).scroll_into_view_if_needed()
    page.locator(f'{WIDGET}[data-ready="true"][data-model="ready"]').wait_for(timeout=60_000)
    after = page.locator(WIDGET).evaluate("w => w.getBoundingClientRect().height")
    assert abs(after - before) <= 1, f"{width} px: {before:.1f} → {after:.1f}"
    _close_and_check(context, page)
