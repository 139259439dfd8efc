// The build's figures (code cells' stored matplotlib output, builder/cells/render.py) are
// `<picture><source srcset=(an empty SVG of the figure's size) media="(scripting: enabled)" data-held>
// <img src=(the PNG) loading="lazy"></picture>`: without JavaScript the browser loads the PNG itself as it nears
// (loading="lazy"); with it, the held <source> shows the empty picture, and nothing is fetched until the figure
// nears the view (near-view.js), when the <source> is removed and the <img> falls back to its own src. Chromium's
// own `loading="lazy"` fetches anything within ~1250–2500 px, which put a 40 KiB PNG into module 04's first view
// (issue 19). Printing loads them all.
import { loadWhenNear } from "./near-view.js";

function show(held, img, eager = false) {
  if (eager) img.loading = "eager"; // printing: now, not when a lazy image's turn would come
  held.remove();
}

export function initLazyFigures(doc) {
  const held = [...doc.querySelectorAll("picture > source[data-held]")];
  const figures = held.map((source) => [source, source.parentElement.querySelector("img")]);
  for (const [source, img] of figures) loadWhenNear([img.closest(".code-cell") || img], () => show(source, img));
  if (figures.length) window.addEventListener("beforeprint", () => figures.forEach(([s, i]) => show(s, i, true)));
}
