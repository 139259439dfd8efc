// Which optional packs (matplotlib & co.: the runtime index's `optional.packages`, builder/runtime/optional.py) some
// code imports — a quick scan on the page, so that the unpacker can bring them along with the boot (runtime.js).
// The worker still decides what a run needs with Python's own parser (course_runtime.imports_of); a name this scan
// misses is fetched then, as before. Pure functions: tests/unit/test_pyodide_assets.py runs them under Node.

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

/** The optional packs (index `optional.packages`, builder/runtime/optional.py) that `codes` import, with
 *  their dependencies: their asset names. */
export function optionalPacksFor(index, codes) {
  const packages = (index && index.optional && index.optional.packages) || {};
  const byImport = new Map();
  for (const [name, pkg] of Object.entries(packages)) for (const imp of pkg.imports) byImport.set(imp, name);
  const wanted = new Set();
  const visit = (name) => {
    if (!packages[name] || wanted.has(name)) return;
    wanted.add(name);
    for (const dep of packages[name].depends) visit(dep);
  };
  for (const code of codes) for (const imp of importedNames(code)) if (byImport.has(imp)) visit(byImport.get(imp));
  return [...wanted].map((name) => packages[name].pack);
}
