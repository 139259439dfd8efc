// Entry point: assets/widget-step-calculator.js, loaded by pages with a "step-calculator" widget (see theme/js/widgets/index.js).
import { mountWidgets } from "./widgets/index.js";
import { mount } from "./widgets/step-calculator.js";

mountWidgets(document, "step-calculator", mount);
