// Entry point: assets/widget-multi-head.js, loaded by pages with a "multi-head" widget (see theme/js/widgets/index.js).
import { mountWidgets } from "./widgets/index.js";
import { mount } from "./widgets/multi-head.js";

mountWidgets(document, "multi-head", mount);
