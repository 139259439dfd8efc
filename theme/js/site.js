// Entry point of the script every page loads (bundled by esbuild into assets/site.js, a classic script).
// Each feature is a small module with its own init; they must never throw into each other.
import { initToc } from "./site/toc.js";
import { initProgress } from "./site/progress.js";
import { initQuizzes } from "./site/quiz.js";
import { initSearch } from "./site/search.js";
import { initPrint, initReadingProgress, keepWidgetFallbacksForPrint } from "./site/reading.js";
import { initLazyWidgets } from "./site/lazy-widgets.js";
import { initLazyFigures } from "./site/lazy-figures.js";
import { initScrollHints } from "./site/scroll-hint.js";
import { initGlossary } from "./site/glossary.js";
import { initScrollAnchoring } from "./site/scroll-anchor.js";

// Widgets are mounted by their own scripts (assets/widget-<name>.js), loaded after this one on pages that have them
// (or, for lazy kinds, when one of their widgets nears the viewport: site/lazy-widgets.js).
const features = [initToc, keepWidgetFallbacksForPrint, initProgress, initQuizzes, initSearch, initReadingProgress, initPrint,
  initScrollHints, initGlossary, initScrollAnchoring, initLazyWidgets, initLazyFigures];

function start() {
  for (const init of features) {
    try {
      init(document);
    } catch (err) {
      console.warn("feature failed to start", init.name, err); // eslint-disable-line no-console
    }
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
