// Scroll anchoring where the engine has none (WebKit: Safari, every iOS browser): when something above the
// viewport changes height — a widget mounting over its static fallback, a figure arriving — the text the reader
// is looking at would jump. Chromium and Firefox keep it in place themselves (CSS `overflow-anchor`); elsewhere
// the page scrolls by the height the element gained.
const native = typeof CSS !== "undefined" && CSS.supports && CSS.supports("overflow-anchor", "auto");

/** Run `change()` (which may return a promise) and keep what the reader sees where it was. */
export function keepInView(el, change) {
  if (native) return change();
  const before = el.getBoundingClientRect();
  const settle = () => {
    const after = el.getBoundingClientRect();
    // only an element wholly above the viewport's top pushes the visible text down
    if (before.bottom <= 0 && after.height !== before.height) window.scrollBy(0, after.height - before.height);
  };
  const result = change();
  if (result && typeof result.then === "function") return result.finally(settle);
  settle();
  return result;
}
