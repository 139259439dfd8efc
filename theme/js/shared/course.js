// The site's one browser global, `Course`: every script hangs what it offers on one part of it —
//   Course.python   the Python runtime (getRuntime, …; .index and .assets: the runtime index and file:// chunks)
//   Course.search   the search dialog (open, search; .index and .engine once loaded)
//   Course.editor   the code editor (createEditor, …; .completions: the NumPy autocomplete data)
//   Course.cells    the page's code cells        Course.widgets  each widget kind's mount(root, data)
//   Course.options  switches set before the page scripts run (tests, measurements): noPrefetch, noIdleEditor
//   Course.cellsBoot  what assets/cells.js hands the cells' controller   Course.inputSeen  the reader's first input came
// Whichever script runs first creates it; the build's data scripts do the same (builder/bundle.py).

/** The global itself, created on first use (scripts may run in any order). */
export function course() {
  return (self.Course = self.Course || {});
}

/** One part of it (`python`, `search`, …), created on first use. */
export function part(name) {
  const root = course();
  return (root[name] = root[name] || {});
}

/** A switch of Course.options (false when unset). */
export function option(name) {
  const options = course().options;
  return Boolean(options && options[name]);
}
