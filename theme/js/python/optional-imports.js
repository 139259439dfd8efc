// Which optional packages (matplotlib & co.: the runtime index's `optional.packages`, builder/runtime/optional.py)
// some imports need, dependencies first (`optionalPackagesFor`, used by the worker with Python's own list of a
// cell's imports), and a quick scan of code for its imports on the page (`optionalPacksFor`: runtime.js gives those
// packs to the unpacker along with the boot; a name the scan misses is fetched when a run needs it, as before).
// Pure functions: tests/unit/test_pyodide_assets.py runs them under Node.

/** Top-level names `code` imports (`import a.b, c` / `from a.b import x`, at any indentation): a quick scan
 *  for what to fetch early; the worker decides what a run needs with Python's own parser (imports_of). */
export function importedNames(code) {
  const names = new Set();
  for (const m of String(code).matchAll(/^[ \t]*(?:import[ \t]+([\w., \t]+)|from[ \t]+(\w+))/gm)) {
    for (const item of (m[1] || m[2]).split(",")) {
      const name = item.trim().split(/[ \t.]/)[0];
      if (name) names.add(name);
    }
  }
  return names;
}

/** The optional packages (names, dependencies first) that `imports` (top-level module names) need, given the index's
 *  `optional.packages` — leaving out those in `skip` (already installed). The one resolver: the worker feeds it
 *  Python's own list of a cell's imports (worker.js, optionalNeeds), the page this file's scan (below). */
export function optionalPackagesFor(packages, imports, skip = new Set()) {
  const byImport = new Map();
  for (const [name, pkg] of Object.entries(packages)) for (const imp of pkg.imports) byImport.set(imp, name);
  const order = [];
  const visit = (name) => {
    if (!packages[name] || skip.has(name) || order.includes(name)) return;
    for (const dep of packages[name].depends) visit(dep);
    order.push(name);
  };
  for (const imp of imports) if (byImport.has(imp)) visit(byImport.get(imp));
  return order;
}

/** The optional packs (index `optional.packages`, builder/runtime/optional.py) that `codes` import, with
 *  their dependencies: their asset names. */
export function optionalPacksFor(index, codes) {
  const packages = (index && index.optional && index.optional.packages) || {};
  const imports = new Set(codes.flatMap((code) => [...importedNames(code)]));
  return optionalPackagesFor(packages, imports).map((name) => packages[name].pack);
}
