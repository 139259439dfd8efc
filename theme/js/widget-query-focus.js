// Entry point: assets/widget-query-focus.js, loaded by pages with a "query-focus" widget (see theme/js/widgets/index.js).
import { mountWidgets } from "./widgets/index.js";
import { mount } from "./widgets/query-focus.js";

mountWidgets(document, "query-focus", mount);
