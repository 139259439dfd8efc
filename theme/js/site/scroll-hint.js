// Boxes wider than the screen — display formulas and figures drawn too wide to shrink (their labels would fall
// under 12 px) — scroll sideways. This marks the ones that really overflow: focusable, so arrow keys scroll
// them, named for screen readers, with the hidden side faded (can-left / can-right) and, for figures, a hint.
const SELECTOR = ".math-display, .figure-scroll";

// Reading a box's scroll sizes needs an up-to-date layout, and the classes written below change style: so all
// boxes are measured first and written after (one layout, not one per box), and never at start-up — the
// ResizeObserver reports each box once it is laid out (a box in a section that is not rendered yet, see
// .page-section in base.css, is measured when the reader gets there instead of forcing that layout now).
function measure(box) {
  const overflowing = box.scrollWidth > box.clientWidth + 1;
  return {
    box,
    overflowing,
    left: overflowing && box.scrollLeft > 1,
    right: overflowing && box.scrollLeft + box.clientWidth < box.scrollWidth - 1,
  };
}

function apply({ box, overflowing, left, right }) {
  box.classList.toggle("is-overflowing", overflowing);
  box.classList.toggle("can-left", left);
  box.classList.toggle("can-right", right);
  if (overflowing !== box.hasAttribute("tabindex")) {
    if (overflowing) {
      box.tabIndex = 0;
      box.setAttribute("role", "group");
      box.setAttribute("aria-label", box.classList.contains("math-display") ? "公式（可左右滚动）" : "插图（可左右滚动）");
    } else {
      box.removeAttribute("tabindex");
      box.removeAttribute("role");
      box.removeAttribute("aria-label");
    }
  }
}

const update = (boxes) => boxes.map(measure).forEach(apply);

export function initScrollHints(doc) {
  const boxes = [...doc.querySelectorAll(SELECTOR)];
  if (!boxes.length) return;
  for (const box of boxes) box.addEventListener("scroll", () => update([box]), { passive: true });
  if (typeof ResizeObserver === "function") {
    const observer = new ResizeObserver((entries) => update(entries.map((e) => e.target)));
    for (const box of boxes) observer.observe(box);
  } else {
    update(boxes);
    window.addEventListener("resize", () => update(boxes));
  }
}
