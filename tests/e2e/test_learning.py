"""Learning features in a real Chromium: quizzes, course progress, search, reading aids.

Expected values come from the authored content (the quiz YAML, the page front matter) and from the built
HTML, never from the implementation under test.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml
from playwright.sync_api import expect

from tests.conftest import ROOT

pytestmark = pytest.mark.e2e


def authored_quizzes(slug: str) -> list[dict]:
    text = (ROOT / "content" / f"{slug}.md").read_text(encoding="utf-8")
    return [yaml.safe_load(m.group(1)) for m in re.finditer(r"```\{quiz\}\n(.*?)```", text, re.S)]


def front_matter(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])


def course_order() -> list[tuple[str, str]]:
    """(slug, title) of the written pages in course order: modules by number, then explainers by title."""
    pages = [(front_matter(p), p.stem) for p in sorted((ROOT / "content").glob("*.md"))]
    modules = sorted(((m["module"], m.get("slug", s), m["title"]) for m, s in pages if m.get("kind") == "module"))
    explainers = sorted(
        (m["title"], m.get("slug", s))
        for m, s in pages
        if m.get("kind", "explainer") == "explainer" and m.get("slug", s) != "index"
    )
    return [(s, t) for _, s, t in modules] + [(s, t) for t, s in explainers]


def plain(text: str) -> str:
    """Authored Markdown text as the reader sees it, for text that has no formulas."""
    return re.sub(r"\*\*|`", "", text).strip()


def answer(page, quiz: dict, choice: list[int]) -> None:
    """Check the options `choice` names by their authored index (the page shows them shuffled), then submit."""
    root = page.locator(f"#quiz-{quiz['id']}")
    for i in choice:
        root.locator(f'.quiz-option[data-index="{i}"] input').check()
    root.locator(".quiz-submit").click()


def shown_order(root) -> list[int]:
    """The authored index of each option, in the order the page shows them."""
    return [int(i) for i in root.locator(".quiz-option").evaluate_all("els => els.map((e) => e.dataset.index)")]


# ------------------------------------------------------------------------------------------------ quizzes


def test_quiz_feedback_retry_and_keyboard_only(page):
    # why-causal-mask: its feedback has a formula only in the right option's
    quiz = next(q for q in authored_quizzes("module-05-attention") if q["id"] == "why-causal-mask")
    page.goto(page.base + "module-05-attention.html")
    root = page.locator(f"#quiz-{quiz['id']}")
    page.wait_for_function(f"document.querySelector('#quiz-{quiz['id']}').dataset.ready === 'true'")
    # positions on screen (the options are shuffled at build time) of the right option and of a wrong one
    order = shown_order(root)
    right = order.index(next(i for i, o in enumerate(quiz["options"]) if o.get("correct")))
    wrong = next(
        p
        for p, i in enumerate(order)
        if not quiz["options"][i].get("correct") and "$" not in quiz["options"][i]["feedback"]
    )
    inputs = root.locator(".quiz-option input")
    options = root.locator(".quiz-option")

    # Keyboard only: focus the radio group, arrow to the wrong option, Tab to 提交, Enter.
    inputs.nth(0).focus()
    for _ in range(wrong):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Space")  # checks the focused radio (an arrow key already did, unless it is the first)
    assert inputs.nth(wrong).is_checked()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "提交"
    page.keyboard.press("Enter")

    feedback = options.nth(wrong).locator(".quiz-feedback")
    assert feedback.is_visible()
    assert plain(quiz["options"][order[wrong]]["feedback"]) in feedback.inner_text()
    assert "错误" in feedback.inner_text()
    assert "is-incorrect" in options.nth(wrong).get_attribute("class")
    result = root.locator(".quiz-result")
    assert result.get_attribute("aria-live") == "polite"
    page.wait_for_function(f"document.querySelector('#quiz-{quiz['id']} .quiz-result').textContent.includes('还不对')")
    # A first wrong try gives feedback on the chosen option only: the answer stays hidden.
    assert not root.locator("details.quiz-explanation").is_visible()
    assert "正确答案" not in root.inner_text()
    assert root.locator(".is-correct, .is-missed").count() == 0
    assert root.locator(".quiz-reveal").is_visible()
    assert all(inputs.nth(i).is_disabled() for i in range(len(quiz["options"])))
    assert page.evaluate("document.activeElement.textContent") == "再试一次"
    # The wrong option's feedback is tied to its input for screen readers.
    assert inputs.nth(wrong).get_attribute("aria-describedby") == feedback.get_attribute("id")

    # Nor does a reload leak it.
    page.reload()
    page.wait_for_function(f"document.querySelector('#quiz-{quiz['id']}').dataset.ready === 'true'")
    assert inputs.nth(wrong).is_checked() and "正确答案" not in root.inner_text()
    assert not root.locator("details.quiz-explanation").is_visible()
    root.locator(".quiz-retry").focus()

    page.keyboard.press("Enter")  # 再试一次
    assert not feedback.is_visible()
    assert not any(inputs.nth(i).is_checked() for i in range(len(quiz["options"])))
    assert page.evaluate("document.activeElement.name") == f"quiz-{quiz['id']}"
    for _ in range(right):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Space")
    assert inputs.nth(right).is_checked()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"document.querySelector('#quiz-{quiz['id']} .quiz-result').textContent.includes('回答正确')"
    )
    assert "is-correct" in options.nth(right).get_attribute("class")
    assert "正确" in options.nth(right).locator(".quiz-feedback").inner_text()
    assert root.locator("details.quiz-explanation").get_attribute("open") is not None  # explanation earned
    assert not root.locator(".quiz-reveal").is_visible()

    # The answer is remembered: after a reload the quiz shows the same answered state.
    page.reload()
    page.wait_for_function(f"document.querySelector('#quiz-{quiz['id']}').dataset.ready === 'true'")
    assert inputs.nth(right).is_checked() and inputs.nth(right).is_disabled()
    assert root.locator(".quiz-retry").is_visible()
    assert root.locator("details.quiz-explanation").is_visible()


def test_quiz_answer_after_second_wrong_try_or_on_request(page):
    quizzes = authored_quizzes("module-05-attention")
    quiz = next(q for q in quizzes if sum(1 for o in q["options"] if not o.get("correct")) >= 2)
    wrongs = [i for i, o in enumerate(quiz["options"]) if not o.get("correct")]
    page.goto(page.base + "module-05-attention.html")
    root = page.locator(f"#quiz-{quiz['id']}")
    page.wait_for_function(f"document.querySelector('#quiz-{quiz['id']}').dataset.ready === 'true'")
    letters = "、".join("ABCDEFGH"[p] for p, i in enumerate(shown_order(root)) if quiz["options"][i].get("correct"))
    answer(page, quiz, [wrongs[0]])
    assert not root.locator(".quiz-answer").is_visible()
    root.locator(".quiz-retry").click()
    answer(page, quiz, [wrongs[1]])  # the second wrong try shows the answer
    assert root.locator(".quiz-answer").is_visible()
    assert root.locator(".quiz-answer").inner_text() == f"正确答案：{letters}"
    assert not root.locator(".quiz-reveal").is_visible()

    other = next(q for q in quizzes if q["id"] != quiz["id"])
    other_root = page.locator(f"#quiz-{other['id']}")
    answer(page, other, [next(i for i, o in enumerate(other["options"]) if not o.get("correct"))])
    assert not other_root.locator(".quiz-answer").is_visible()
    other_root.get_by_role("button", name="显示答案").click()  # or the reader asks for it
    assert other_root.locator(".quiz-answer").is_visible()
    page.reload()  # and that is remembered
    page.wait_for_function(f"document.querySelector('#quiz-{other['id']}').dataset.ready === 'true'")
    assert other_root.locator(".quiz-answer").is_visible() and root.locator(".quiz-answer").is_visible()


# ----------------------------------------------------------------------------------------------- progress


def card_state(page, slug: str) -> str:
    """The badge as the reader sees it, once the card is on screen: the outline below the first screen is laid out
    only then (content-visibility: auto, theme/css/index.css), and until it is, its text is not rendered."""
    badge = page.locator(f'.card[data-slug="{slug}"] .progress-badge')
    badge.scroll_into_view_if_needed()
    expect(badge).to_have_text(
        re.compile(r"\S"), use_inner_text=True
    )  # laid out (the text is rendered a frame after the scroll)
    return badge.inner_text()


def test_progress_cards_continue_link_and_reset(page):
    order = course_order()
    assert len(order) >= 2
    (first, first_title), (second, second_title) = order[0], order[1]
    page.goto(page.base + "index.html")
    panel = page.locator(".progress-panel")
    assert panel.is_visible()
    continue_link = page.locator("[data-progress-continue]")
    assert continue_link.get_attribute("href") == f"{first}.html"
    assert "继续学习" in continue_link.inner_text() and first_title in continue_link.inner_text()
    assert [card_state(page, slug) for slug, _ in order] == ["未开始"] * len(order)

    # Mark the first page done with its toggle.
    continue_link.click()
    page.wait_for_url(re.compile(rf"{first}\.html$"))
    toggle = page.locator(".page-done-toggle")
    state = page.locator("[data-page-done-state]")
    assert toggle.inner_text() == "标记为已学完" and state.inner_text() == "尚未学完"
    toggle.click()
    assert toggle.inner_text() == "取消学完标记"  # the label says what the next click does
    assert state.inner_text().endswith("已学完 · 你手动标记")
    # Unmarking can be undone.
    toggle.click()
    assert state.inner_text() == "尚未学完"
    page.get_by_role("button", name="撤销").click()
    assert state.inner_text().endswith("已学完 · 你手动标记")
    assert not page.get_by_role("button", name="撤销").is_visible()
    page.goto(page.base + "index.html")
    assert card_state(page, first) == "已完成"
    assert card_state(page, second) == "未开始"
    assert continue_link.get_attribute("href") == f"{second}.html"
    assert second_title in continue_link.inner_text()

    # Answering one quiz of the second page makes it 进行中; answering all of them right makes it done.
    quizzes = authored_quizzes(second)
    assert quizzes, f"{second} has no quizzes to answer"
    page.goto(page.base + f"{second}.html")
    wrong = next(i for i, o in enumerate(quizzes[0]["options"]) if not o.get("correct"))
    answer(page, quizzes[0], [wrong])
    page.goto(page.base + "index.html")
    assert card_state(page, second) == "进行中"
    page.goto(page.base + f"{second}.html")
    page.locator(f"#quiz-{quizzes[0]['id']} .quiz-retry").click()
    for quiz in quizzes:
        answer(page, quiz, [i for i, o in enumerate(quiz["options"]) if o.get("correct")])
    # Marked done by the quizzes, and the page says so (and why), with the button offering to undo it.
    assert page.locator("[data-page-done-state]").inner_text().endswith("已学完 · 测验全部答对")
    assert page.locator(".page-done-toggle").inner_text() == "取消学完标记"
    assert "自动标记为学完" in page.locator(".page-done-status").inner_text()
    page.goto(page.base + "index.html")
    assert card_state(page, second) == "已完成"
    done = sum(1 for slug, _ in order if card_state(page, slug) == "已完成")
    assert page.locator("[data-progress-summary]").inner_text() == f"已完成 {done} / {len(order)} 篇"

    # Reset asks first; 取消 keeps everything, 确定重置 clears it (also after a reload).
    page.get_by_role("button", name="重置学习进度").click()
    page.get_by_role("button", name="取消").click()
    assert card_state(page, first) == "已完成"
    page.get_by_role("button", name="重置学习进度").click()
    page.get_by_role("button", name="确定重置").click()
    assert [card_state(page, slug) for slug, _ in order] == ["未开始"] * len(order)
    page.reload()
    assert [card_state(page, slug) for slug, _ in order] == ["未开始"] * len(order)
    assert continue_link.get_attribute("href") == f"{first}.html"


# ------------------------------------------------------------------------------------------------- search


def headings_containing(built_site: Path, word: str) -> set[tuple[str, str]]:
    """(page file, heading id) of every h2–h4 of the built course whose text contains `word`."""
    found = set()
    for html_file in built_site.glob("*.html"):
        if html_file.name == "index.html":
            continue
        html = html_file.read_text(encoding="utf-8")
        for m in re.finditer(r'<h([234]) id="([^"]+)">(.*?)</h\1>', html, re.S):
            text = re.sub(r"<[^>]+>", "", m.group(3))
            if word in text:
                found.add((html_file.name, m.group(2)))
    return found


def open_search(page, how: str) -> None:
    if how == "slash":
        page.locator("body").press("/")
    else:
        page.keyboard.press("Control+k")
    page.get_by_role("dialog").wait_for()


def result_targets(page) -> list[tuple[str, str]]:
    hrefs = page.locator(".search-results [role='option'] a").evaluate_all(
        "els => els.map(a => a.getAttribute('href'))"
    )
    out = []
    for href in hrefs:
        file, _, anchor = href.partition("#")
        out.append((file, unquote(anchor)))
    return out


@pytest.mark.parametrize("query", ["缩放", "温度"])
def test_chinese_search_finds_headings_and_enter_opens_the_anchor(page, built_site, query):
    requests = []
    page.on("request", lambda r: requests.append((r.url, r.resource_type)))
    page.goto(page.base + "attention-explained.html")
    assert page.evaluate("typeof window.Course?.search?.index") == "undefined"  # lazy: not on first view
    assert not any("search-index.js" in url for url, _ in requests)
    open_search(page, "slash")
    dialog = page.get_by_role("dialog")
    assert dialog.get_attribute("aria-labelledby") and page.locator("#search-dialog-title").inner_text() == "搜索课程"
    page.keyboard.type(query)
    page.wait_for_selector(".search-results [role='option']")
    targets = result_targets(page)
    expected = headings_containing(built_site, query)
    assert expected, f"no heading contains {query}"
    # Every heading that contains the query is found, and heading matches come before text-only matches.
    assert set(targets[: len(expected)]) == expected
    marks = page.locator(".search-results mark").all_inner_texts()
    # what is marked is the query, or a word the glossary gives it (温度 finds `temperature=` in code too)
    group = {query} | {
        word.lower()
        for entry in yaml.safe_load((ROOT / "content" / "glossary.yml").read_text("utf-8"))
        if entry["term"] == query
        for word in [*entry.get("synonyms", []), entry.get("english", "")]
        if word
    }
    assert marks and all(m.lower() in group for m in marks), marks
    assert page.locator(".search-status").inner_text().startswith("找到")

    # ↓ then ↑ moves the active option; Enter opens the active result at its heading.
    page.keyboard.press("ArrowDown")
    assert page.locator("#search-result-1").get_attribute("aria-selected") == "true"
    page.keyboard.press("ArrowUp")
    assert page.locator("#search-result-0").get_attribute("aria-selected") == "true"
    file, anchor = targets[0]
    page.keyboard.press("Enter")
    page.wait_for_function("id => decodeURIComponent(location.hash.slice(1)) === id", arg=anchor)
    assert page.url.split("#")[0].endswith(file)
    heading = page.locator(f"[id='{anchor}']")
    assert query in heading.inner_text()
    assert heading.evaluate("el => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; }")
    assert not page.get_by_role("dialog").is_visible()
    # The index arrived as a <script>, never through fetch/XHR (which file:// would block).
    kinds = [kind for url, kind in requests if "search-index.js" in url]
    assert kinds == ["script"] or (page.base.startswith("file") and kinds in ([], ["script"]))
    # (the one kind of fetch allowed: a result that opens with a code cell on screen prefetches the page's Python
    # runtime, by design — cells/page.js watchForPrefetch)
    assert not [url for url, kind in requests if kind in ("fetch", "xhr") and "/assets/python/" not in url]


def reader_text(page: Path) -> str:
    """The text a reader sees on a page: its markup without tags, without what is never shown as text (scripts: the
    widgets' data; templates: hints and solutions until opened; styles) and without the glossary's tooltips."""
    html = page.read_text(encoding="utf-8")
    html = re.sub(r"<(script|template|style)\b.*?</\1>", "", html, flags=re.S)
    html = re.sub(r'<span class="gloss-tip".*?</span>', "", html, flags=re.S)
    return re.sub(r"<[^>]+>", "", html)


def test_latin_search_focus_trap_and_escape(page, built_site):
    page.goto(page.base + "module-05-attention.html")
    opener = page.locator(".search-open")
    assert opener.is_visible() and opener.inner_text().startswith("搜索")
    opener.focus()
    page.keyboard.press("Enter")
    page.get_by_role("dialog").wait_for()
    page.keyboard.type("SwiGlu")  # any case: SwiGLU in the text
    page.wait_for_selector(".search-results [role='option']")
    pages_with_word = {
        f.name for f in built_site.glob("*.html") if f.name != "index.html" and "swiglu" in reader_text(f).lower()
    }
    # every page with the word is listed while the results stay under the list's cap (30 sections)
    assert page.locator(".search-results [role='option']").count() < 30
    assert {file for file, _ in result_targets(page)} == pages_with_word
    assert {m.lower() for m in page.locator(".search-results mark").all_inner_texts()} == {"swiglu"}
    # Snippets are text: only <mark> elements inside.
    tags = page.locator(".search-result-snippet *").evaluate_all("els => [...new Set(els.map(e => e.tagName))]")
    assert tags == ["MARK"]

    # Focus stays inside the dialog; Esc closes it and gives focus back to the button.
    for _ in range(5):
        page.keyboard.press("Tab")
        assert page.evaluate("!!document.activeElement.closest('dialog')")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("!!document.activeElement.closest('dialog')")
    page.keyboard.press("Escape")
    assert not page.get_by_role("dialog").is_visible()
    assert page.evaluate("document.activeElement.classList.contains('search-open')")

    # Ctrl+K opens it again, the query is kept selected; a query with no match says so.
    open_search(page, "ctrl")
    page.keyboard.type("zzqqxx")
    page.wait_for_function("document.querySelector('.search-status').textContent.includes('没有找到')")
    assert page.locator(".search-results [role='option']").count() == 0


# ------------------------------------------------------------------------------------------- reading aids


def test_print_shows_fallbacks_and_answers_and_hides_chrome(page):
    page.goto(page.base + "module-05-attention.html")
    # the widgets of the kinds loaded with the page (lazy kinds mount when they near the view)
    eager = """[...document.querySelectorAll('.widget[data-widget]')].filter((w) => !(w.dataset.widget in
      JSON.parse(document.getElementById('lazy-widget-scripts')?.textContent || '{}'))).every((w) => w.dataset.ready)"""
    page.wait_for_function(eager, polling=50)
    assert page.locator(".site-header").is_visible()
    # Reading progress: 0 at the top, full at the bottom, drawn with a transform (no layout change).
    bar = page.locator(".reading-progress span")
    width_before = bar.evaluate("el => el.getBoundingClientRect().height")
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_function(
        "getComputedStyle(document.querySelector('.reading-progress span')).transform === 'matrix(1, 0, 0, 1, 0, 0)'"
    )
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_function(
        "getComputedStyle(document.querySelector('.reading-progress span')).transform.startsWith('matrix(0, 0')"
    )
    assert bar.evaluate("el => el.getBoundingClientRect().height") == width_before

    page.emulate_media(media="print")
    assert not page.locator(".site-header").is_visible()
    assert not page.locator(".toc").is_visible()
    assert not page.locator(".page-done").is_visible()
    for widget in page.locator(".widget").all():
        fallback = widget.locator(".widget-print-fallback")
        assert fallback.is_visible()
        # the numbers on paper: a table (the real model's explorer has a caption instead — its first view is the
        # compare view's table, printed just above)
        explorer = widget.get_attribute("data-widget") == "model-attention" and not fallback.locator("table").count()
        assert fallback.locator(".widget-caption" if explorer else "table").first.is_visible()
        assert not widget.locator("button").first.is_visible() if widget.locator("button").count() else True
    explanation = page.locator(".quiz-explanation-text").first
    assert explanation.is_visible()  # <details> print open, though closed on screen
    assert not page.locator(".quiz-submit").first.is_visible()


def test_phone_layout_search_and_progress_fit_390px(mobile_page):
    page = mobile_page
    page.goto(page.base + "index.html")
    assert page.locator(".progress-panel").is_visible()
    page.locator(".search-open").tap()
    page.get_by_role("dialog").wait_for()
    page.keyboard.type("注意力")
    page.wait_for_selector(".search-results [role='option']")
    box = page.locator(".search-dialog").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
