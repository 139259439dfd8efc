// Entry point of the script every page loads (bundled by esbuild into assets/site.js, a classic script).
// Each feature is a small module with its own init; they must never throw into each other.
import { initToc } from "./site/toc.js";
import { initWidgets } from "./widgets/index.js";
import { initProgress } from "./site/progress.js";
import { initQuizzes } from "./site/quiz.js";
import { initSearch } from "./site/search.js";
import { initPrint, initReadingProgress, keepWidgetFallbacksForPrint } from "./site/reading.js";

const features = [initToc, keepWidgetFallbacksForPrint, initWidgets, initProgress, initQuizzes, initSearch, initReadingProgress, initPrint];

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
