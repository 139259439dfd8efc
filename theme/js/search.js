// Entry point: assets/search.js, the search ranking and result text, injected by theme/js/site/search.js with
// the search index the first time the search dialog opens.
import * as engine from "./site/search-engine.js";

window.__COURSE_SEARCH_ENGINE__ = engine;
