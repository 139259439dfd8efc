// Entry of assets/cells.js, loaded only on pages that have code cells. It is small on purpose: buttons,
// output, storage and prefetching; the Python runtime (assets/python/python-runtime.js, this tag's
// data-runtime) is loaded when first needed (cells/lazy-runtime.js). The editor (CodeMirror) is assets/editor.js,
// loaded later by the cells themselves from the URL in this tag's data-editor attribute.
import { course } from "./shared/course.js";
import { CellsPage } from "./cells/page.js";

const script = document.currentScript;
const completionsURL = script ? script.dataset.completions || "" : "";
const editorURL = script ? script.dataset.editor || "" : "";
const runtimeURL = script ? script.dataset.runtime || "" : "";
const widgetBase = script ? script.src : ""; // assets/: the widget scripts sit next to this one

function start() {
  const sections = [...document.querySelectorAll(".code-cell[data-cell-id]")];
  if (!sections.length) return;
  try {
    course().cells = new CellsPage(document, sections, { completionsURL, editorURL, widgetBase, runtimeURL });
  } catch (err) {
    console.warn("code cells failed to start", err); // eslint-disable-line no-console
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
