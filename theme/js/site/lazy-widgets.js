// No widget script is loaded with the page: the template names each kind's script in <script id="lazy-widget-scripts">,
// and each is injected once, when one of its widgets nears the view (near-view.js). Until then the widget shows its
// static fallback, in the same place.
import { loadWhenNear } from "./near-view.js";

export function initLazyWidgets(doc) {
  const spec = doc.getElementById("lazy-widget-scripts");
  if (!spec) return;
  for (const [name, src] of Object.entries(JSON.parse(spec.textContent))) {
    const roots = [...doc.querySelectorAll(`.widget[data-widget="${name}"]`)];
    if (!roots.length) continue;
    loadWhenNear(roots, () => {
      const script = doc.createElement("script");
      script.src = src;
      doc.head.append(script);
    });
  }
}
