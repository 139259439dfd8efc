// Mounts every widget on the page. The numbers come from the JSON the build embedded next to each widget;
// a widget that fails keeps its static fallback tables (and the others still start).
import { mount as heatmap } from "./heatmap.js";
import { mount as multiHead } from "./multi-head.js";
import { mount as queryFocus } from "./query-focus.js";
import { mount as stepCalculator } from "./step-calculator.js";
import { mount as temperature } from "./temperature.js";

const WIDGETS = {
  heatmap,
  "query-focus": queryFocus,
  "step-calculator": stepCalculator,
  temperature,
  "multi-head": multiHead,
};

export function initWidgets(doc) {
  for (const root of doc.querySelectorAll(".widget[data-widget]")) {
    const mount = WIDGETS[root.dataset.widget];
    const script = root.querySelector("script.widget-data");
    if (!mount || !script) continue;
    try {
      mount(root, JSON.parse(script.textContent));
      root.dataset.ready = "true";
    } catch (err) {
      console.warn("widget failed to start", root.dataset.widget, err); // eslint-disable-line no-console
    }
  }
}
