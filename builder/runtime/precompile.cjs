// Bytecode precompile (builder/runtime/precompile.py, precompiled): loads Pyodide under Node and runs
// precompile_in_pyodide.py in it, so the .pyc match the browser's CPython exactly.
// node precompile.cjs <pyodide dir> <precompile_in_pyodide.py> <stdlib in> <stdlib out> <numpy in> <numpy out> <site-packages> <warm imports>
const [pyodideDir, code, ...args] = process.argv.slice(2);
const fs = require("fs");
const { loadPyodide } = require(pyodideDir + "/pyodide.js");
(async () => {
  const py = await loadPyodide({ indexURL: pyodideDir + "/" });
  py.runPython(fs.readFileSync(code, "utf8"));
  const [stdIn, stdOut, npIn, npOut, sitePackages, warm] = args;
  py.FS.writeFile("/tmp/std.zip", fs.readFileSync(stdIn));
  py.FS.writeFile("/tmp/np.whl", fs.readFileSync(npIn));
  py.globals.get("main")("/tmp/std.zip", "/tmp/std.out", "/tmp/np.whl", "/tmp/np.out", sitePackages, warm);
  fs.writeFileSync(stdOut, py.FS.readFile("/tmp/std.out"));
  fs.writeFileSync(npOut, py.FS.readFile("/tmp/np.out"));
})().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
