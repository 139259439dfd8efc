// Reading aids: the header's reading-progress bar and print preparation.
//
// The bar is a full-width <span> scaled with transform: scaleX(), written once per animation frame from
// scroll/resize events: no layout property changes, so no layout shift and no forced reflow per event.
export function initReadingProgress(doc) {
  const bar = doc.querySelector(".reading-progress span");
  if (!bar) return;
  let queued = false;
  const update = () => {
    queued = false;
    const root = doc.documentElement;
    const scrollable = root.scrollHeight - window.innerHeight;
    const ratio = scrollable > 0 ? Math.min(1, Math.max(0, window.scrollY / scrollable)) : 0;
    bar.style.transform = `scaleX(${ratio.toFixed(4)})`;
  };
  const schedule = () => {
    if (!queued) {
      queued = true;
      window.requestAnimationFrame(update);
    }
  };
  window.addEventListener("scroll", schedule, { passive: true });
  window.addEventListener("resize", schedule, { passive: true });
  doc.documentElement.classList.add("has-reading-progress");
  schedule();
}

// Printing: every <details> (quiz explanations, collapsed setup cells, the TOC) prints open; the ones we
// opened are closed again afterwards. print.css does the same for browsers that can style details content.
export function initPrint(doc) {
  let opened = [];
  window.addEventListener("beforeprint", () => {
    opened = [...doc.querySelectorAll("details:not([open])")];
    for (const d of opened) d.open = true;
  });
  window.addEventListener("afterprint", () => {
    for (const d of opened) d.open = false;
    opened = [];
  });
}

// Widgets replace their build-time fallback (tables with the numbers) with the live view. Paper cannot be
// clicked, so a copy of each fallback is kept, shown only by print.css. It must run before initWidgets.
export function keepWidgetFallbacksForPrint(doc) {
  for (const body of doc.querySelectorAll(".widget > .widget-body")) {
    const copy = body.cloneNode(true);
    copy.className = "widget-print-fallback";
    copy.setAttribute("aria-hidden", "true");
    for (const el of copy.querySelectorAll("[id]")) el.removeAttribute("id");
    body.after(copy);
  }
}
