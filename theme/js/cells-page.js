// Entry of assets/cells-page.js: the code cells' controller (cells/page.js), loaded by assets/cells.js (which
// passes the URLs from its tag and the actions the reader took before this script arrived).
import { course } from "./shared/course.js";
import { CellsPage } from "./cells/page.js";

const boot = course().cellsBoot;
if (boot && !course().cells) {
  try {
    const page = (course().cells = new CellsPage(document, boot.sections, boot.options));
    page.replay(boot.pending.splice(0));
  } catch (err) {
    console.warn("code cells failed to start", err); // eslint-disable-line no-console
  }
}
