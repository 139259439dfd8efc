// Entry point: assets/search.js, the search ranking and result text, injected by theme/js/site/search.js with
// the search index the first time the search dialog opens.
import { part } from "./shared/course.js";
import * as engine from "./site/search-engine.js";

part("search").engine = engine;
