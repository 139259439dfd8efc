// Build-time code cells in the reader's own runtime: Pyodide 0.27.7 + the very packs the browser installs
// (NumPy, attention_core, and matplotlib & co. when a cell imports them), under Node, sandboxed.
// Started by builder/cells/executor.py (run_cells_in_pyodide), one process per page, with Node's permission
// model (reads only the files named in the spec, no writes, no child processes, no workers, no addons) and
// code generation from strings disabled (no eval / new Function: nothing can rebuild `require`).
//
// node pyodide_cells.cjs <spec.json>    spec: {pyodideDir, stdlib, packs: [{path, wheel}], optional: {name:
//   {path, wheel, imports, depends}}, courseRuntime, executor, packsModule, env}
// stdin: one JSON request {prelude, cells: [{filename, code, expect_error}]}
// stdout: {"ready": true}, then one JSON line per cell (executor.py's result format); stops after an
// unexpected error.  Cell output never reaches stdout: the cells' streams are captured in Python.
"use strict";
const fs = require("fs");
const out = process.stdout;
const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const COURSE_DIR = "/home/pyodide/_course";

function readStdin() {
  const chunks = [];
  let n;
  const buf = Buffer.alloc(1 << 16);
  for (;;) {
    try { n = fs.readSync(0, buf, 0, buf.length, null); } catch (e) { if (e.code === "EAGAIN") continue; if (e.code === "EOF") break; throw e; }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function optionalNeeds(py, cells) {
  const byImport = new Map();
  for (const [name, pkg] of Object.entries(spec.optional)) for (const imp of pkg.imports) byImport.set(imp, name);
  const importsOf = py.pyimport("course_runtime").imports_of;
  const order = [];
  const visit = (name) => {
    if (!spec.optional[name] || order.includes(name)) return;
    for (const dep of spec.optional[name].depends) visit(dep);
    order.push(name);
  };
  for (const cell of cells) {
    const proxy = importsOf(cell.code);
    for (const imp of proxy.toJs()) if (byImport.has(imp)) visit(byImport.get(imp));
    proxy.destroy();
  }
  return order;
}

/** What Python could reach through the `js` module (globalThis) and must not: the network and Node's
 *  process object (with code generation off, nothing can get `require` back). */
function closeTheDoors() {
  for (const name of ["fetch", "WebSocket", "XMLHttpRequest", "EventSource", "Request", "Response", "Headers",
    "process", "require", "module", "exports", "Buffer", "global", "navigator", "BroadcastChannel", "MessageChannel",
    "Worker", "SharedWorker", "importScripts"]) {
    try { delete globalThis[name]; } catch { /* non-configurable */ }
    if (name in globalThis) { try { globalThis[name] = undefined; } catch { /* ignore */ } }
  }
}

// Emscripten's NODEFS reads its flag constants with process.binding("constants"), which the permission
// model refuses: hand it the same constants, and nothing else.
process.binding = (name) => {
  if (name === "constants") return { fs: fs.constants, os: require("os").constants };
  throw new Error(`process.binding(${name}) is disabled`);
};

(async () => {
  const request = readStdin();
  const { loadPyodide } = require(spec.pyodideDir + "/pyodide.js");
  const { installPack } = await import(require("url").pathToFileURL(spec.packsModule).href);
  const py = await loadPyodide({ indexURL: spec.pyodideDir + "/", stdLibURL: spec.stdlib, env: spec.env,
    stdin: () => null, stdout: () => {}, stderr: () => {} });
  const install = async (path, wheel) => {
    const libs = installPack(py.FS, path, new Uint8Array(fs.readFileSync(path)));
    if (libs.length) await py._api.loadDynlibsFromPackage({ file_name: wheel }, libs);
  };
  for (const p of spec.packs) await install(p.path, p.wheel);
  py.FS.mkdirTree(COURSE_DIR);
  py.FS.writeFile(COURSE_DIR + "/course_runtime.py", fs.readFileSync(spec.courseRuntime));
  py.FS.writeFile(COURSE_DIR + "/cell_executor.py", fs.readFileSync(spec.executor));
  py.runPython(`import sys\nsys.path.insert(0, ${JSON.stringify(COURSE_DIR)})\nimport course_runtime`);
  const needs = optionalNeeds(py, request.cells);
  for (const name of needs) await install(spec.optional[name].path, spec.optional[name].wheel);
  // matplotlib's first import takes seconds in wasm: part of the start-up, not of the first plotting cell's time
  if (needs.includes("matplotlib")) py.runPython("import importlib\nimportlib.invalidate_caches()\nimport course_runtime\ncourse_runtime.prepare_matplotlib()");
  py.runPython(`import importlib\nimportlib.invalidate_caches()\nimport cell_executor, json
exec(compile(${JSON.stringify(request.prelude)}, "<prelude>", "exec"), {})
_course_ns = {"__name__": "__main__", "__builtins__": __builtins__}
def _course_run(code, filename):
    return json.dumps(cell_executor.execute_cell(code, filename, _course_ns, None), ensure_ascii=False)
import os, posix
def _no_processes(*args, **kwargs):
    raise OSError(38, "build-time cells cannot start processes (the build runs them in Pyodide's sandbox)")
os.system = posix.system = _no_processes  # Emscripten's system() would ask Node for a child process
del _no_processes
os.chdir("/tmp")  # the cells' working directory: an empty in-memory folder`);
  const run = py.globals.get("_course_run");
  closeTheDoors();
  out.write(JSON.stringify({ ready: true }) + "\n");
  for (const cell of request.cells) {
    const line = run(cell.code, cell.filename);
    out.write(line + "\n");
    if (JSON.parse(line).error && !cell.expect_error) break;
  }
})().catch((e) => { console.error(String(e && e.stack || e)); setTimeout(() => { throw e; }); });
