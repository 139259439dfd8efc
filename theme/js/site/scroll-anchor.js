// Scroll anchoring where the engine has none (WebKit: Safari, every iOS browser). Chromium and Firefox keep the
// text in view where it is when something above it changes height (CSS `overflow-anchor`); in WebKit a widget
// mounting over its static fallback, a figure arriving or a cell's editor replacing its listing above the viewport
// pushed the text being read down by as much as 3,500 px. This does what the CSS Scroll Anchoring spec does, for the
// article's blocks: it remembers the first block whose top is in view (the anchor) and where it was in the page; when
// any block or the page changes size (a ResizeObserver: after layout, before paint), or at the next scroll event,
// it scrolls by how far the anchor moved.
const native = typeof CSS !== "undefined" && CSS.supports && CSS.supports("overflow-anchor", "auto");

const BLOCKS = ".article .page-section > *, .article > :not(.page-section)";

/** The first block whose top edge is in view, or the one that spans the top of the view. `blocks` are in the
 *  page's order, so their bottoms only grow: a binary search finds the first below the view's top (a scroll
 *  event must not measure the hundreds of blocks above it). */
function pickAnchor(blocks) {
  let lo = 0;
  let hi = blocks.length;
  while (lo < hi) {
    // a block that is not laid out (display: none) has no place: the next one that is stands for it
    let at = (lo + hi) >> 1;
    let r = blocks[at].getBoundingClientRect();
    while (!r.width && !r.height && at + 1 < hi) r = blocks[++at].getBoundingClientRect();
    if (!r.width && !r.height) hi = (lo + hi) >> 1; // none laid out from there to hi
    else if (r.bottom > 0) hi = at;
    else lo = at + 1;
  }
  let spanning = null;
  for (let i = lo; i < blocks.length; i++) {
    const r = blocks[i].getBoundingClientRect();
    if (r.height === 0) continue;
    if (r.top >= 0) return blocks[i];
    if (!spanning) spanning = blocks[i];
  }
  return spanning;
}

export function initScrollAnchoring(doc) {
  if (native || !("ResizeObserver" in window)) return;
  let found = [...doc.querySelectorAll(BLOCKS)];
  const blocks = () => found;
  // The anchor's place in the page (not in the view): a scroll leaves it where it is, only a change of layout moves it.
  let anchor = null;
  let anchorAt = 0;
  const placeOf = (el) => el.getBoundingClientRect().top + window.scrollY;
  const remember = () => {
    anchor = window.scrollY > 0 ? pickAnchor(blocks()) : null; // at the very top, nothing above can move the text
    anchorAt = anchor ? placeOf(anchor) : 0;
  };
  // Called after a resize and on every scroll: a layout change can land between a scroll and its scroll event (a
  // widget mounting in that frame), and the event must not take the moved text as where the reader is.
  const keep = () => {
    if (anchor && anchor.isConnected) {
      const moved = placeOf(anchor) - anchorAt;
      if (Math.abs(moved) >= 1) window.scrollBy(0, moved);
    }
    remember();
  };
  const observer = new ResizeObserver(keep);
  observer.observe(doc.body);
  for (const el of blocks()) observer.observe(el);
  // blocks added later to the article or a section (a widget's own content stays inside its block, observed)
  const added = new MutationObserver((records) => {
    for (const rec of records) for (const node of rec.addedNodes) if (node.nodeType === 1) observer.observe(node);
    found = [...doc.querySelectorAll(BLOCKS)];
  });
  for (const parent of doc.querySelectorAll(".article, .article .page-section")) added.observe(parent, { childList: true });
  window.addEventListener("scroll", keep, { passive: true });
  window.addEventListener("load", keep);
  remember();
}
