"""Two tabs editing the same cell (theme/js/cells/tabs.js): the storage event tells the other tab, which offers
to take that version or keep its own — no edit is lost silently, over http and file://."""

from __future__ import annotations

import pytest

from tests.e2e.test_cells import PAGE, open_without_python, set_code, shown_code

pytestmark = pytest.mark.e2e

CELL = "#cell-causal-mask"


def stored(page) -> str | None:
    return page.evaluate("""() => { const k = Object.keys(localStorage).find(k => k.endsWith(':causal-mask'));
                                    return k ? JSON.parse(localStorage.getItem(k)).code : null; }""")


def test_two_tabs_editing_one_cell_keep_both_safe(page):
    open_without_python(page)
    other = page.context.new_page()
    other.goto(page.base + PAGE)
    set_code(page, CELL, "print('A')")
    page.wait_for_timeout(100)
    notice = other.locator(f"{CELL} .cell-notice[data-kind='other-tab']")
    notice.wait_for()  # B is told about A's edit…
    other.locator(f"{CELL} .cell-notice-btn", has_text="用另一个标签页的版本").click()
    assert shown_code(other, CELL) == "print('A')" and notice.count() == 0

    set_code(other, CELL, "print('B')")  # …now B edits: A is told, and keeps its own version
    mine = page.locator(f"{CELL} .cell-notice[data-kind='other-tab']")
    mine.wait_for()
    assert stored(page) == "print('B')"
    page.locator(f"{CELL} .cell-notice-btn", has_text="保留本页的版本").click()
    assert stored(page) == "print('A')" and shown_code(page, CELL) == "print('A')"
    other.locator(f"{CELL} .cell-notice[data-kind='other-tab']").wait_for()  # and B hears of that in turn
    page.reload()
    assert shown_code(page, CELL) == "print('A')"
    other.close()
