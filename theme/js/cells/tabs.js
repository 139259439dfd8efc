// Two tabs editing the same cell: localStorage keeps one edit per cell, so without this the last tab to
// save would silently win. The browser fires `storage` in every *other* tab of the site when one saves or
// resets a cell; a tab whose code for that cell differs says so and offers both versions — taking the other
// one, or keeping its own (which saves it again, and so tells the other tab in turn). Nothing is lost silently.

import { keyFor, parseEdit } from "./storage.js";

/** Listen for the other tabs' saves; returns the listener (for the saves assets/cells.js heard before the cells'
 *  controller was there: CellsPage.replay). */
export function watchOtherTabs(cells) {
  const onStorage = (event) => {
    const cell = cells.find((c) => event.key === keyFor(c.page.slug, c.id));
    if (!cell) return;
    const theirs = event.newValue === null ? cell.original : parseEdit(event.newValue)?.code;
    if (typeof theirs !== "string" || theirs === cell.code) return;
    cell.showNotice("另一个标签页修改了这个单元的代码。", [
      ["用另一个标签页的版本", () => { cell.hideNotice(); cell.setCode(theirs); }],
      ["保留本页的版本", () => { cell.hideNotice(); cell.onEdit(cell.code); }],
    ], "other-tab");
  };
  window.addEventListener("storage", onStorage);
  return onStorage;
}
