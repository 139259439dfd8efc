// Build-time code cells in the reader's own runtime: Pyodide 0.27.7 and the very files the browser loads
// (builder/runtime/distribution.py), under Node, sandboxed. Started by builder/cells/executor.py
// (run_cells_in_pyodide), one process per page, with Node's permission model (reads only the files named in the
// spec; no writes, child processes, workers or addons), code generation from strings disabled, and no `fetch`
// from the start (so Pyodide cannot fall back to its CDN for a package).
//
// node pyodide_cells.cjs <spec.json>    spec: {pyodideDir, lockFile, packageCacheDir, preload, cellRuntime, exerciseRuntime, executor, env}
// (`packageCacheDir`: an empty temporary folder, the one place it may write: loadPackage under Node makes sure its
// cache folder exists, which the permission model counts as a write, and writes nothing there for local files.)
// stdin: one JSON request {prelude, cells: [{filename, code, expect_error}]}
// stdout: {"ready": true}, then one JSON line per cell (executor.py's result format); stops after an
// unexpected error. Cell output never reaches stdout: the cells' streams are captured in Python.
"use strict";
const fs = require("fs");
const out = process.stdout;
const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const CELL_DIR = "/home/pyodide/.cell-runtime";

function readStdin() {
  const chunks = [];
  const buf = Buffer.alloc(1 << 16);
  for (;;) {
    let n;
    try { n = fs.readSync(0, buf, 0, buf.length, null); } catch (e) { if (e.code === "EAGAIN") continue; if (e.code === "EOF") break; throw e; }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/** What Python could reach through the `js` module (globalThis) and must not: the network and Node's
 *  process object (with code generation off, nothing can get `require` back). */
function closeTheDoors(names) {
  for (const name of names) {
    try { delete globalThis[name]; } catch { /* non-configurable */ }
    if (name in globalThis) { try { globalThis[name] = undefined; } catch { /* ignore */ } }
  }
}
const NETWORK = ["fetch", "WebSocket", "XMLHttpRequest", "EventSource", "Request", "Response", "Headers"];
const NODE = ["process", "require", "module", "exports", "Buffer", "global", "navigator", "BroadcastChannel",
  "MessageChannel", "Worker", "SharedWorker", "importScripts"];

// Emscripten's NODEFS reads its flag constants with process.binding("constants"), which the permission
// model refuses: hand it the same constants, and nothing else.
process.binding = (name) => {
  if (name === "constants") return { fs: fs.constants, os: require("os").constants };
  throw new Error(`process.binding(${name}) is disabled`);
};

(async () => {
  const request = readStdin();
  const { loadPyodide } = require(spec.pyodideDir + "/pyodide.js");
  closeTheDoors(NETWORK);
  const py = await loadPyodide({ indexURL: spec.pyodideDir + "/", lockFileURL: spec.lockFile,
    packageCacheDir: spec.packageCacheDir, env: spec.env,
    stdin: () => null, stdout: () => {}, stderr: () => {} });
  py.FS.mkdirTree(CELL_DIR);
  py.FS.writeFile(CELL_DIR + "/cell_runtime.py", fs.readFileSync(spec.cellRuntime));
  py.FS.writeFile(CELL_DIR + "/cell_executor.py", fs.readFileSync(spec.executor));
  py.FS.writeFile(CELL_DIR + "/exercise_runtime.py", fs.readFileSync(spec.exerciseRuntime));
  py.runPython(`import sys\nsys.path.insert(0, ${JSON.stringify(CELL_DIR)})`);
  // loadPackage reports a package it cannot load to errorCallback and goes on: here that is the error.
  const errors = [];
  const options = { messageCallback: () => {}, errorCallback: (m) => errors.push(m) };
  await py.loadPackage(spec.preload, options);
  await py.loadPackagesFromImports(request.cells.map((c) => c.code).join("\n"), options);
  if (errors.length) throw new Error(`could not load the Python packages: ${errors.join("; ")}`);
  // matplotlib's first import takes seconds in wasm: part of the start-up, not of the first plotting cell's time
  if (py.loadedPackages.matplotlib) py.runPython("import cell_runtime\ncell_runtime.prepare_matplotlib()");
  py.runPython(`import cell_executor, inspect, json
exec(compile(${JSON.stringify(request.prelude)}, "<prelude>", "exec"), {})
_course_ns = {"__name__": "__main__", "__builtins__": __builtins__}
def _course_run(code, filename):
    result = cell_executor.execute_cell(code, filename, _course_ns)
    if inspect.iscoroutine(result):  # the cell awaits at its top level: JavaScript awaits this on Pyodide's loop
        async def finish():
            return json.dumps(await result, ensure_ascii=False)
        return finish()
    return json.dumps(result, ensure_ascii=False)
import os, posix
def _no_processes(*args, **kwargs):
    raise OSError(38, "build-time cells cannot start processes (the build runs them in Pyodide's sandbox)")
os.system = posix.system = _no_processes  # Emscripten's system() would ask Node for a child process
del _no_processes
os.chdir("/tmp")  # the cells' working directory: an empty in-memory folder`);
  const run = py.globals.get("_course_run");
  closeTheDoors(NODE);
  out.write(JSON.stringify({ ready: true }) + "\n");
  for (const cell of request.cells) {
    let line = run(cell.code, cell.filename);
    if (typeof line !== "string") { // a coroutine (the cell awaits): Pyodide's event loop runs it
      const awaiting = line;
      line = await awaiting;
      awaiting.destroy();
    }
    out.write(line + "\n");
    if (JSON.parse(line).error && !cell.expect_error) break;
  }
})().catch((e) => { console.error(String((e && e.stack) || e)); setTimeout(() => { throw e; }); });
