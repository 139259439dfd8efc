// Widget kinds whose page script is heavy and whose widgets sit far down a page (the real model's attention) are
// not loaded with the page: the template names their scripts in <script id="lazy-widget-scripts">, and each is
// injected once, when one of its widgets comes within a screen of the viewport or gets the keyboard focus. Until
// then the widget shows its static fallback, so nothing moves when it mounts in place.
export function initLazyWidgets(doc) {
  const spec = doc.getElementById("lazy-widget-scripts");
  if (!spec) return;
  for (const [name, src] of Object.entries(JSON.parse(spec.textContent))) {
    const roots = [...doc.querySelectorAll(`.widget[data-widget="${name}"]`)];
    if (!roots.length) continue;
    let loaded = false;
    const load = () => {
      if (loaded) return;
      loaded = true;
      observer?.disconnect();
      const script = doc.createElement("script");
      script.src = src;
      doc.head.append(script);
    };
    const observer = "IntersectionObserver" in window
      ? new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) load(); },
        { rootMargin: "100% 0px" })
      : null;
    for (const root of roots) {
      if (observer) observer.observe(root);
      root.addEventListener("focusin", load, { once: true });
    }
    if (!observer) load();
  }
}
