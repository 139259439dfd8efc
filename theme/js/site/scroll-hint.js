// Boxes that scroll when their content is wider (or taller) than they are — display formulas, figures drawn too
// wide to shrink (their labels would fall under 12 px), and the widgets' tables and charts (theme/css/widgets.css,
// the widgets' style.css: every box they give `overflow: auto`). This marks the ones that really overflow:
// focusable, so arrow keys scroll them (WCAG 2.1.1; axe's scrollable-region-focusable), named for screen readers
// (role=group: a name needs a role, and a landmark per table would crowd the page's landmarks), with the hidden side
// faded (can-left / can-right) and, for figures, a hint. A box that fits is left alone: no tab stop that does nothing.
// A box that the page names itself (a widget's own tabindex / role / aria-label) keeps what it has.
const SELECTOR = [
  ".math-display",
  ".figure-scroll",
  ".heat-scroll",
  ".pe-heat.pe-static",
  ".step-panel",
  ".mh-head",
  ".mh-matrix",
  ".lc-steps",
].join(", ");

// Reading a box's scroll sizes needs an up-to-date layout, and the classes written below change style: so all
// boxes are measured first and written after (one layout, not one per box), and never at start-up — the
// ResizeObserver reports each box once it is laid out (a box in a section that is not rendered yet, see
// .page-section in base.css, is measured when the reader gets there instead of forcing that layout now).
function measure(box) {
  const wide = box.scrollWidth > box.clientWidth + 1;
  const tall = getComputedStyle(box).overflowY !== "hidden" && box.scrollHeight > box.clientHeight + 1;
  return {
    box,
    wide,
    tall,
    left: wide && box.scrollLeft > 1,
    right: wide && box.scrollLeft + box.clientWidth < box.scrollWidth - 1,
  };
}

function label(box, wide, tall) {
  const what = box.classList.contains("math-display") ? "公式"
    : box.classList.contains("figure-scroll") ? "插图"
    : box.querySelector("table") ? "表格" : "图表";
  return `${what}（${wide && tall ? "可滚动" : tall ? "可上下滚动" : "可左右滚动"}）`;
}

// The attributes this module set on a box (so it removes only those when the box stops overflowing)
const added = new WeakMap();

function apply({ box, wide, tall, left, right }) {
  const overflowing = wide || tall;
  box.classList.toggle("is-overflowing", overflowing);
  box.classList.toggle("can-left", left);
  box.classList.toggle("can-right", right);
  const mine = added.get(box);
  if (overflowing) {
    const values = { tabindex: "0", role: "group", "aria-label": label(box, wide, tall) };
    const set = mine || Object.keys(values).filter((name) => !box.hasAttribute(name));
    for (const name of set) if (box.getAttribute(name) !== values[name]) box.setAttribute(name, values[name]);
    if (!mine) added.set(box, set);
  } else if (mine) {
    for (const name of mine) box.removeAttribute(name);
    added.delete(box);
  }
}

const update = (boxes) => boxes.filter((box) => box.isConnected).map(measure).forEach(apply);
const onScroll = (event) => update([event.currentTarget]); // one listener per box, however often it is watched

function boxesIn(node) {
  if (node.nodeType !== Node.ELEMENT_NODE) return [];
  const found = [...node.querySelectorAll(SELECTOR)];
  if (node.matches(SELECTOR)) found.unshift(node);
  return found;
}

export function initScrollHints(doc) {
  const resized = typeof ResizeObserver === "function"
    ? new ResizeObserver((entries) => update(entries.map((e) => e.target)))
    : null;
  const watched = new WeakSet();
  const changed = new Set(); // boxes to measure in the next frame
  const watch = (box) => {
    if (watched.has(box)) return;
    watched.add(box);
    box.addEventListener("scroll", onScroll, { passive: true });
    if (resized) resized.observe(box);
    else changed.add(box);
  };
  const boxes = [...doc.querySelectorAll(SELECTOR)];
  boxes.forEach(watch);
  if (!resized) {
    update(boxes);
    window.addEventListener("resize", () => update([...doc.querySelectorAll(SELECTOR)]));
  }
  // The widgets draw their tables after the page has loaded, and redraw them as the reader uses them: a new box is
  // watched (the ResizeObserver reports it once laid out), a removed one let go, and a box whose content changed
  // measured again in the next frame (its content can outgrow it without the box itself changing size).
  if (typeof MutationObserver !== "function") return;
  changed.clear();
  let frame = 0;
  const flush = () => {
    frame = 0;
    const boxes = [...changed];
    changed.clear();
    update(boxes);
  };
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.removedNodes) {
        for (const box of boxesIn(node)) {
          if (resized) resized.unobserve(box);
          watched.delete(box);
        }
      }
      for (const node of record.addedNodes) boxesIn(node).forEach(watch);
      const box = record.target.closest?.(SELECTOR);
      if (box && watched.has(box)) changed.add(box);
    }
    if (changed.size && !frame) frame = requestAnimationFrame(flush);
  }).observe(doc.body, { childList: true, subtree: true });
}
