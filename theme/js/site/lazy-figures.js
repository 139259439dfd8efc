// The build's figures (code cells' stored matplotlib output, builder/cells/render.py) are
// `<picture><source srcset=… media="(scripting: none)"><img data-src=…></picture>`: without JavaScript the
// browser shows the file at once; with it, nothing is fetched until the figure nears the view (near-view.js),
// because Chromium's own `loading="lazy"` fetches anything within ~1250–2500 px, which put a 40 KiB PNG into
// module 04's first view (issue 19). Printing loads them all.
import { loadWhenNear } from "./near-view.js";

function show(img) {
  if (img.dataset.src && !img.getAttribute("src")) img.src = img.dataset.src;
}

export function initLazyFigures(doc) {
  const figures = [...doc.querySelectorAll("img[data-src]")];
  for (const img of figures) loadWhenNear([img.closest(".code-cell") || img], () => show(img));
  if (figures.length) window.addEventListener("beforeprint", () => figures.forEach(show));
}
