// Boxes wider than the screen — display formulas and figures drawn too wide to shrink (their labels would fall
// under 12 px) — scroll sideways. This marks the ones that really overflow: focusable, so arrow keys scroll
// them, named for screen readers, with the hidden side faded (can-left / can-right) and, for figures, a hint.
const SELECTOR = ".math-display, .figure-scroll";

function update(box) {
  const overflowing = box.scrollWidth > box.clientWidth + 1;
  box.classList.toggle("is-overflowing", overflowing);
  box.classList.toggle("can-left", overflowing && box.scrollLeft > 1);
  box.classList.toggle("can-right", overflowing && box.scrollLeft + box.clientWidth < box.scrollWidth - 1);
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

export function initScrollHints(doc) {
  const boxes = [...doc.querySelectorAll(SELECTOR)];
  if (!boxes.length) return;
  const observer = typeof ResizeObserver === "function" ? new ResizeObserver((entries) => entries.forEach((e) => update(e.target))) : null;
  for (const box of boxes) {
    box.addEventListener("scroll", () => update(box), { passive: true });
    if (observer) observer.observe(box);
    update(box);
  }
  if (!observer) window.addEventListener("resize", () => boxes.forEach(update));
}
