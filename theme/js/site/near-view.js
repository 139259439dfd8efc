// When a thing below the first view should load: at once if it is on screen, when it comes within a screen of the
// viewport after the reader has started reading (a scroll, touch, pointer move or key), or when it gets the
// keyboard focus. So a page's first view carries only what it shows (issue 19), and what lies further down is
// there before the reader reaches it. Used for the widget scripts (lazy-widgets.js) and the build's figures
// (lazy-figures.js).
import { onFirstInput } from "../shared/first-input.js";

let reading = false;
const waiting = new Set(); // loaders with something near the viewport, held until the reader acts
onFirstInput(() => {
  reading = true;
  for (const load of waiting) load();
  waiting.clear();
});

/** Call `load` once, when one of `roots` is near the view by the rules above (at once without IntersectionObserver). */
export function loadWhenNear(roots, load) {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    waiting.delete(once);
    observer?.disconnect();
    load();
  };
  const observer = "IntersectionObserver" in window
    ? new IntersectionObserver((entries) => {
      const near = entries.filter((e) => e.isIntersecting);
      if (!near.length) return;
      const onScreen = near.some((e) => e.boundingClientRect.top < window.innerHeight && e.boundingClientRect.bottom > 0);
      if (onScreen || reading) once();
      else waiting.add(once);
    }, { rootMargin: "100% 0px" })
    : null;
  for (const root of roots) {
    if (observer) observer.observe(root);
    root.addEventListener("focusin", once, { once: true });
  }
  if (!observer) once();
  return once;
}
