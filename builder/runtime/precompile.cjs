// Bytecode precompile (builder/runtime/precompile.py): loads Pyodide under Node and runs
// precompile_in_pyodide.py in it, so the .pyc match the browser's CPython exactly.
// node precompile.cjs <spec.json>   spec: {pyodideDir, lockFile, program, files: {in FS path: host path},
//   outputs: {FS path: host path}, main: JSON text for main()}
const fs = require("fs");
const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const { loadPyodide } = require(spec.pyodideDir + "/pyodide.js");
(async () => {
  const py = await loadPyodide({ indexURL: spec.pyodideDir + "/", lockFileURL: spec.lockFile, env: { HOME: "/home/pyodide", MPLBACKEND: "agg" },
    stdout: () => {}, stderr: (t) => process.stderr.write(t + "\n") });
  for (const [inFs, host] of Object.entries(spec.files)) {
    py.FS.mkdirTree(inFs.slice(0, inFs.lastIndexOf("/")));
    py.FS.writeFile(inFs, fs.readFileSync(host));
  }
  for (const inFs of Object.keys(spec.outputs)) py.FS.mkdirTree(inFs.slice(0, inFs.lastIndexOf("/")));
  py.runPython(fs.readFileSync(spec.program, "utf8"));
  py.globals.get("main")(spec.main);
  for (const [inFs, host] of Object.entries(spec.outputs)) fs.writeFileSync(host, py.FS.readFile(inFs));
})().catch((e) => { console.error(String((e && e.stack) || e)); process.exit(1); });
