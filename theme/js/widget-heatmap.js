// Entry point: assets/widget-heatmap.js, loaded by pages with a "heatmap" widget (see theme/js/widgets/index.js).
import { mountWidgets } from "./widgets/index.js";
import { mount } from "./widgets/heatmap.js";

mountWidgets(document, "heatmap", mount);
