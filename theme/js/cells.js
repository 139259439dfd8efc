// Entry of assets/cells.js, loaded on pages that have code cells: only what the cells need before the reader
// does anything. Their controller — buttons, output, storage, the editor and Python (cells/page.js, bundled as
// assets/cells-page.js: this tag's data-controller) — is ~20 KiB the page does not need to show itself, so it is not
// part of the first view (issue 19): it loads at the reader's first input (scroll, touch, pointer, key), at
// once when the reader has stored edits on this page (they must show as soon as the page does), or at the first
// action on a cell. An action taken before it has arrived — a click on 运行 / 停止 / 重置 / 全部运行,
// Ctrl/⌘/Shift+Enter or focus in the code — is kept and carried out once it has (`CellsPage.replay`), and so is
// another tab's save of one of these cells.
import { course } from "./shared/course.js";
import { onFirstInput } from "./shared/first-input.js";
import { loadScript } from "./shared/load-script.js";
import { keyFor, loadEdit } from "./cells/storage.js";

const script = document.currentScript;
const attrs = script ? script.dataset : {};

function start() {
  const sections = [...document.querySelectorAll(".code-cell[data-cell-id]")];
  if (!sections.length) return;
  const slug = document.body.dataset.page || location.pathname;
  const pending = [];
  const boot = (course().cellsBoot = {
    sections, slug, pending,
    options: { completionsURL: attrs.completions || "", editorURL: attrs.editor || "", runtimeURL: attrs.runtime || "",
      widgetBase: script ? script.src : "" }, // assets/: the widget scripts sit next to this one
  });
  // The static code and the buttons work from the start (the controller wires them the same way when it comes).
  for (const section of sections) {
    section.dataset.editor = "static"; // until CodeMirror replaces it: "loading", then "ready"
    const pre = section.querySelector(".cell-source");
    if (pre) {
      pre.tabIndex = 0;
      pre.setAttribute("aria-keyshortcuts", "Control+Enter Meta+Enter Shift+Enter");
    }
    for (const b of section.querySelectorAll("[data-action]")) {
      if (b.dataset.action !== "stop" && !(b.dataset.action === "reset" && section.hasAttribute("data-readonly"))) b.disabled = false;
    }
  }
  for (const b of document.querySelectorAll(".exercise [data-exercise-action]")) b.disabled = false; // exercises' help
  const runAll = document.querySelector('.cells-bar [data-action="run-all"]');
  if (runAll) runAll.disabled = false;

  let loading = null;
  const load = () => {
    if (loading || !attrs.controller) return;
    loading = loadScript(attrs.controller).catch((err) => {
      loading = null; // the next action tries again
      pending.length = 0;
      const status = document.querySelector(".cells-bar-status");
      if (status) { status.textContent = "代码单元的脚本没有加载成功，请检查网络后再试。"; status.dataset.kind = "error"; }
      console.warn("code cells failed to load", err); // eslint-disable-line no-console
    });
  };
  const waiting = () => !course().cells; // once the controller runs, its own listeners take every event

  let pointer = null;
  document.addEventListener("pointerdown", (e) => {
    const pre = waiting() && e.target.closest?.(".code-cell .cell-source");
    if (pre) {
      const box = pre.getBoundingClientRect();
      pointer = { pre, x: e.clientX - box.left, y: e.clientY - box.top };
    }
  }, true);
  document.addEventListener("click", (e) => {
    const button = waiting() && e.target.closest?.(".code-cell [data-action], .cells-bar [data-action], .exercise [data-exercise-action]");
    if (button && !button.disabled) { pending.push({ button }); load(); }
  }, true);
  document.addEventListener("keydown", (e) => {
    const pre = waiting() && e.key === "Enter" && !e.altKey && (e.ctrlKey || e.metaKey || e.shiftKey) &&
      e.target.closest?.(".code-cell .cell-source");
    if (pre) { e.preventDefault(); pending.push({ run: pre.closest(".code-cell"), next: !e.ctrlKey && !e.metaKey }); load(); }
  }, true);
  document.addEventListener("focusin", (e) => {
    const pre = waiting() && e.target.closest?.(".code-cell .cell-source");
    if (pre) {
      pending.push({ focus: pre.closest(".code-cell"), pointer: pointer && pointer.pre === pre ? pointer : null });
      pointer = null;
      load();
    }
  }, true);

  // another tab saving one of these cells: the controller offers that version (cells/tabs.js)
  const prefix = keyFor(slug, "");
  window.addEventListener("storage", (e) => {
    if (waiting() && e.key && e.key.startsWith(prefix)) { pending.push({ storage: { key: e.key, newValue: e.newValue } }); load(); }
  });

  if (sections.some((s) => loadEdit(slug, s.dataset.cellId))) load();
  else {
    boot.options.storedEdits = false; // what is stored from now on is another tab's (CellsPage `storedEdits`)
    onFirstInput(load);
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
