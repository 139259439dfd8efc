// Entry of assets/cells.js, loaded (after python-runtime.js) only on pages that have code cells.
import { CellsPage } from "./cells/page.js";

const script = document.currentScript;
const completionsURL = script ? script.dataset.completions || "" : "";

function start() {
  const sections = [...document.querySelectorAll("section.code-cell")];
  if (!sections.length) return;
  try {
    window.__courseCells = new CellsPage(document, sections, { completionsURL });
  } catch (err) {
    console.warn("code cells failed to start", err); // eslint-disable-line no-console
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
