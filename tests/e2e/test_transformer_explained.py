"""transformer-explained in Chromium: the `transformer-flow` diagram steps through every stage
by button, click and keyboard, announcing each stage's shapes as the build computed them; the `generation-tree`
widget appends the tokens the reader, greedy decoding and sampling pick, shows the next real distribution (checked
against attention_course.smollm2 here), loads its tree only on first interaction, and says so when a pick leaves it."""

from __future__ import annotations

import pytest

from attention_course import smollm2 as real_model
from attention_course.widgets.generation_tree import widget as generation_tree
from attention_course.widgets.generation_tree.widget import with_tail
from builder.model import BuildOptions
from builder.widgets.fallback import percent_row
from tests.conftest import ROOT, TEST_CACHE

pytestmark = pytest.mark.e2e

PAGE = "transformer-explained.html"
OPTIONS = BuildOptions(root=ROOT, cache_dir=TEST_CACHE, python_runtime=False)


def tree(prompt: str) -> real_model.ContinuationTree:
    return real_model.continuation_tree(
        OPTIONS,
        prompt,
        top=generation_tree.TOP,
        branching=generation_tree.BRANCHING,
        depth=7,
        temperatures=generation_tree.TEMPERATURES,
    )  # cached by the site build


def shown(node: real_model.ContinuationNode, temperature: int) -> list[str]:
    """The bars' whole percents: the top tokens' probabilities at that temperature and the rest of the vocabulary,
    rounded like the widget's row."""
    return [f"{p}%" for p in percent_row(with_tail(list(node.probs[temperature])))]  # the last bar: the rest


def test_the_flow_steps_through_every_stage_by_button_click_and_keyboard(page):
    page.goto(page.base + PAGE)
    page.locator('.widget[data-widget="transformer-flow"]').scroll_into_view_if_needed()  # lazy widget scripts
    flow = page.locator('.widget[data-widget="transformer-flow"][data-ready="true"]')
    flow.wait_for()
    shape = real_model.model_shape(OPTIONS)
    panel = flow.locator(".tf-panel")
    assert panel.get_attribute("aria-live") == "polite"
    stages = flow.locator(".tf-stage")
    n = stages.count()
    assert n == 14
    assert "第 1 / 14 站" in panel.inner_text() and flow.get_by_role("button", name="← 上一站").is_disabled()
    seen = []
    for i in range(n - 1):
        flow.get_by_role("button", name="下一站 →").click()
        seen.append(panel.locator(".tf-title").inner_text())
        assert stages.nth(i + 1).get_attribute("aria-current") == "step"
    assert flow.get_by_role("button", name="下一站 →").is_disabled()
    assert seen[2] == "投影出 Q、K、V"
    # the shapes come from the model file: Q is 9 heads × 64 wide, K and V 3 groups × 64
    stages.nth(3).click()
    text = panel.inner_text()
    assert f"Q：5 × {shape.n_heads * shape.head_dim}" in text and f"K：5 × {shape.n_kv_heads * shape.head_dim}" in text
    stages.nth(8).click()
    assert f"5 × {shape.d_ffn}" in panel.inner_text()
    # keyboard: the chosen stage is the one tab stop of the diagram; arrows move, End goes to the last stage
    assert stages.nth(8).evaluate("el => el === document.activeElement && el.tabIndex === 0")
    page.keyboard.press("ArrowDown")
    assert "第 10 / 14 站" in panel.inner_text()
    page.keyboard.press("End")
    assert "Paris" in panel.inner_text() and f"{shape.vocab_size}" in panel.inner_text()
    page.keyboard.press("Home")
    assert stages.nth(0).get_attribute("aria-current") == "step"


def test_generation_picks_greedy_sampling_and_leaving_the_tree(page):
    page.goto(page.base + PAGE)
    page.wait_for_load_state("load")
    assert not [u for u in page.watch.requests if "widget-generation-tree.js" in u]  # lazy: not with the page
    root = page.locator('.widget[data-widget="generation-tree"]')
    root.scroll_into_view_if_needed()
    page.locator('.widget[data-widget="generation-tree"][data-ready="true"]').wait_for()
    data_file = root.locator("script.widget-data").evaluate("s => JSON.parse(s.textContent).data")
    capital = tree("The capital of France is")
    t1 = capital.temperatures.index(1.0)
    values = lambda: root.locator(".gt-bars .bar-value").all_inner_texts()  # noqa: E731
    added = lambda: root.locator(".gt-added").all_inner_texts()  # noqa: E731
    assert values() == shown(capital.nodes[0], t1)
    assert not [u for u in page.watch.requests if data_file in u]  # the tree loads on first interaction
    # greedy: the first candidate, then the distribution the model gives after it
    root.get_by_role("button", name="贪心：选第一名").click()
    page.wait_for_function("el => el.querySelectorAll('.gt-added').length === 1", arg=root.element_handle())
    assert [u for u in page.watch.requests if data_file in u]
    assert added() == [" Paris"]
    paris = capital.node_at((capital.nodes[0].top_ids[0],))
    assert values() == shown(paris, t1)
    # another temperature: the same candidates, their probabilities at that T
    hot = len(capital.temperatures) - 1
    root.get_by_role("button", name=f"T = {capital.temperatures[hot]:g}").click()
    assert values() == shown(paris, hot)
    # a pick of the reader's own, by its button
    second = capital.strings[paris.top_ids[1]]
    root.locator(".gt-pick").nth(1).click()
    page.wait_for_function("el => el.querySelectorAll('.gt-added').length === 2", arg=root.element_handle())
    assert added() == [" Paris", second]
    node = capital.node_at((capital.nodes[0].top_ids[0], paris.top_ids[1]))
    assert values() == shown(node, hot)
    # sampling: one of the shown candidates is appended
    candidates = root.locator(".gt-pick").all_inner_texts()
    root.get_by_role("button", name="按温度抽一个").click()
    page.wait_for_function("el => el.querySelectorAll('.gt-added').length === 3", arg=root.element_handle())
    assert added()[-1].replace(" ", "␣").replace("\n", "↵") in candidates
    # undo twice, then a candidate without a branch: the widget says the pick left the tree
    root.get_by_role("button", name="撤销一步").click()
    assert len(added()) == 2
    leaf = node.children.index(-1)
    root.locator(".gt-pick").nth(leaf).click()
    page.wait_for_function("el => el.querySelectorAll('.gt-added').length === 3", arg=root.element_handle())
    assert root.locator(".gt-outside").is_visible() and not root.locator(".gt-bars").is_visible()
    assert "超出了预先算好的树" in root.locator(".gt-outside").inner_text()
    assert "走出了预先算好的树" in root.locator(".gt-status").inner_text()
    assert root.get_by_role("button", name="贪心：选第一名").is_disabled()
    root.get_by_role("button", name="撤销一步").click()
    assert root.locator(".gt-bars").is_visible() and values() == shown(node, hot)
    # the other prompt starts from its own first step
    story = tree("Once upon a time, there was a little")
    root.get_by_role("button", name="童话开头").click()
    root.get_by_role("button", name="T = 1").click()
    assert added() == [] and values() == shown(story.nodes[0], t1)
