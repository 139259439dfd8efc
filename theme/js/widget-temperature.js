// Entry point: assets/widget-temperature.js, loaded by pages with a "temperature" widget (see theme/js/widgets/index.js).
import { mountWidgets } from "./widgets/index.js";
import { mount } from "./widgets/temperature.js";

mountWidgets(document, "temperature", mount);
