// Mounts the widgets of one kind. Each kind is its own small script, assets/widget-<name>.js (made by
// builder/bundle.mjs from this module and <name>.js), that a page loads only if it has such a widget (templates/page.html), deferred
// after site.js, so it runs before DOMContentLoaded and after site.js kept the fallbacks for print.
// The numbers come from the JSON the build embedded next to each widget; a widget that fails keeps its
// static fallback tables (and the others still start).
import { part } from "../shared/course.js";

const starting = new WeakSet(); // widgets whose mount is waiting for a data script of theirs

export function mountWidgets(doc, name, mount) {
  part("widgets")[name] = mount; // Course.widgets.<name>: e.g. a code cell's own data shown with the same widget
  const failed = (err) => console.warn("widget failed to start", name, err); // eslint-disable-line no-console
  for (const root of doc.querySelectorAll(`.widget[data-widget="${name}"]`)) {
    const script = root.querySelector("script.widget-data");
    if (!script || root.dataset.ready || starting.has(root)) continue;
    try {
      // A mount that first loads numbers kept out of the page returns a promise: ready once it has drawn.
      const drawn = mount(root, JSON.parse(script.textContent));
      if (drawn && typeof drawn.then === "function") {
        starting.add(root);
        drawn.then(() => { root.dataset.ready = "true"; }, failed).finally(() => starting.delete(root));
      } else {
        root.dataset.ready = "true";
      }
    } catch (err) {
      failed(err);
    }
  }
}
