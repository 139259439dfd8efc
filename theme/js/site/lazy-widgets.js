// No widget script is loaded with the page: the template names each kind's script in <script id="lazy-widget-scripts">,
// and each is injected once, when one of its widgets is on screen, or comes within a screen of the viewport after
// the reader has started reading (a scroll, touch, pointer move or key), or gets the keyboard focus. So a page's
// first view carries only the scripts of the widgets it shows (issue 19), and a widget further down is mounted
// before the reader reaches it. Until then the widget shows its static fallback, in the same place.
const INPUT_EVENTS = ["scroll", "pointermove", "pointerdown", "touchstart", "keydown", "wheel"];

function onFirstInput(fn) {
  const go = () => {
    for (const type of INPUT_EVENTS) window.removeEventListener(type, go, true);
    fn();
  };
  for (const type of INPUT_EVENTS) window.addEventListener(type, go, { capture: true, passive: true });
}

export function initLazyWidgets(doc) {
  const spec = doc.getElementById("lazy-widget-scripts");
  if (!spec) return;
  let reading = false;
  const waiting = new Set(); // loaders of kinds with a widget near the viewport, held until the reader acts
  onFirstInput(() => {
    reading = true;
    for (const load of waiting) load();
    waiting.clear();
  });
  for (const [name, src] of Object.entries(JSON.parse(spec.textContent))) {
    const roots = [...doc.querySelectorAll(`.widget[data-widget="${name}"]`)];
    if (!roots.length) continue;
    let loaded = false;
    const load = () => {
      if (loaded) return;
      loaded = true;
      waiting.delete(load);
      observer?.disconnect();
      const script = doc.createElement("script");
      script.src = src;
      doc.head.append(script);
    };
    const observer = "IntersectionObserver" in window
      ? new IntersectionObserver((entries) => {
        const near = entries.filter((e) => e.isIntersecting);
        if (!near.length) return;
        const onScreen = near.some((e) => e.boundingClientRect.top < window.innerHeight && e.boundingClientRect.bottom > 0);
        if (onScreen || reading) load();
        else waiting.add(load);
      }, { rootMargin: "100% 0px" })
      : null;
    for (const root of roots) {
      if (observer) observer.observe(root);
      root.addEventListener("focusin", load, { once: true });
    }
    if (!observer) load();
  }
}
