// The Python worker: Pyodide 0.27.7 on its public API (loadPyodide, unpackArchive, setInterruptBuffer), in every
// engine. Bundled to a string by builder/bundle.mjs and started by runtime.js from a blob: URL.
//
// Packages are installed by unpacking their wheels into site-packages (`unpackArchive`, public), not with
// `loadPackage`, which compiles every extension module of a package before anything is imported: Python's own
// import then loads an extension module when it is first imported (a worker may compile wasm synchronously), so
// `import numpy` compiles 4.5 of NumPy's 7.5 MB of wasm and `np.random` the rest when a cell first uses it. Measured
// in WebKit, the slowest engine here: NumPy ready 2–4 s sooner; in Chromium and Firefox the same or a little sooner.
//
// Its files are the runtime's assets (builder/runtime/site.py): every one ships as wrapper scripts
// (transport.js) and is checked against the sha256 of the runtime index before it is used. Pyodide reads them
// through `fetch`, which this worker replaces: a URL under the runtime's folder is answered with the asset's
// bytes (http: the worker fetches and decodes its wrapper scripts; file://: the page loads them and posts the
// payload, since a file:// worker may not fetch), anything else is refused — so nothing in this worker,
// Python included, can reach the network. pyodide.js and pyodide.asm.js come as blob: URLs the page made (a
// file:// worker in WebKit may not load blob: URLs it made itself).
//
//   init  {base, mode, assets, chunkBytes, scripts, preload, interruptBuffer, stoppableLoops}  →  progress…, ready | init-error
//   run   {id, code, filename}  →  stream…, display…, packages…, pausing?, result
//   stop  {id}                  (read at once, not queued) the run, which said `pausing`, ends at its next
//                               `await pause()` with KeyboardInterrupt (cell_runtime.py), its namespace kept
//   reset {id}                  →  reset-done
import CELL_RUNTIME_PY from "./cell_runtime.py";
import EXERCISE_RUNTIME_PY from "./exercise_runtime.py";
import { decodePayload, fetchPayload } from "./transport.js";
import { checkSha256 } from "./verify.js";
import { zstdReady } from "./zstd.js";

const post = (msg, transfer) => self.postMessage(msg, transfer || []);
const mark = (label) => post({ type: "mark", label, t: performance.timeOrigin + performance.now() });
const nativeFetch = self.fetch.bind(self);
const nativeImportScripts = self.importScripts.bind(self);
const MIME = { wasm: "application/wasm", json: "application/json", js: "text/javascript" };
const CELL_DIR = "/home/pyodide/.cell-runtime";
const SITE_PACKAGES = "/lib/python3.12/site-packages";
const installed = new Set(); // packages unpacked into site-packages

let base = "";
let mode = "http";
let chunkBytes = 0;
const index = new Map(); // asset name → {size, sha256, encoding, decodedSize, wrappers, wrapperSize}
const bytesOf = new Map(); // asset name → Promise<Uint8Array> (verified, inflated)
const fromPage = new Map(); // file://: asset name → {resolve, reject} until the page posts its payload
let pyodide = null;
let runner = null;
let interrupt = null;
let lock = null; // pyodide-lock.json: which package provides which import
let currentRun = null;
let onBytes = null; // counts the wrapper bytes read, for the progress of the load in course

// ------------------------------------------------------------------------------------------------ assets

function payloadFromPage(name) {
  return new Promise((resolve, reject) => {
    fromPage.set(name, { resolve, reject });
    post({ type: "need", name });
  });
}

/** One asset's bytes: fetched (http) or asked of the page (file://), checked, inflated. Each is read once. */
function assetBytes(name) {
  if (!bytesOf.has(name)) {
    const a = index.get(name);
    const read = (async () => {
      const count = onBytes;
      let payload;
      if (mode === "http") {
        payload = await fetchPayload(base, a, chunkBytes, (n) => count && count(n), nativeFetch);
      } else {
        payload = await payloadFromPage(name);
        await checkSha256(name, payload, a.sha256);
        if (count) count(a.wrapperSize);
      }
      return decodePayload(a, payload);
    })();
    read.catch(() => bytesOf.delete(name)); // asked again, it is read again
    bytesOf.set(name, read);
  }
  return bytesOf.get(name);
}

function assetName(url) {
  const u = String(url);
  if (!u.startsWith(base)) return null;
  const name = decodeURIComponent(u.slice(base.length).split(/[?#]/)[0]);
  return index.has(name) ? name : null;
}

/** `fetch` for this worker: the runtime's own assets only (and the data: URL of the zstd decoder). */
async function assetFetch(input) {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (url.startsWith("data:")) return dataResponse(url);
  const name = assetName(url);
  if (name === null) throw new TypeError(`network access is disabled in the Python worker (${url})`);
  if (name === MAIN_WASM && mainWasm) return mainWasmStandIn();
  const bytes = await assetBytes(name);
  bytesOf.delete(name); // Pyodide reads each file once; a second read fetches it again
  const ext = name.split(".").pop();
  return new Response(bytes, { status: 200, headers: { "Content-Type": MIME[ext] || "application/octet-stream" } });
}

// The main wasm (10 MB) is compiled as soon as its bytes are here, while pyodide.asm.js is evaluated, instead of
// when Pyodide asks for it: Pyodide gets a stand-in Response from `fetch`, and `WebAssembly.instantiateStreaming`
// (this worker's, for that Response only) instantiates the module compiled meanwhile. Nothing of Pyodide's is
// touched: both are web APIs of this worker.
const MAIN_WASM = "pyodide.asm.wasm";
let mainWasm = null; // Promise<WebAssembly.Module>
const standIns = new WeakSet();

function compileMainWasmEarly() {
  mainWasm = assetBytes(MAIN_WASM).then((bytes) => { bytesOf.delete(MAIN_WASM); return WebAssembly.compile(bytes); });
  mainWasm.catch(() => {}); // reported when Pyodide instantiates it
  const native = WebAssembly.instantiateStreaming;
  WebAssembly.instantiateStreaming = async (source, imports) => {
    const response = await source;
    if (!standIns.has(response)) return native.call(WebAssembly, response, imports);
    const module = await mainWasm;
    return { module, instance: await WebAssembly.instantiate(module, imports) };
  };
}

function mainWasmStandIn() {
  const response = new Response(null, { status: 200, headers: { "Content-Type": MIME.wasm } });
  standIns.add(response);
  return response;
}

function dataResponse(url) {
  const comma = url.indexOf(",");
  const meta = url.slice(5, comma);
  const body = url.slice(comma + 1);
  const bytes = meta.endsWith(";base64") ? Uint8Array.from(atob(body), (c) => c.charCodeAt(0))
    : new TextEncoder().encode(decodeURIComponent(body));
  return new Response(bytes, { status: 200, headers: { "Content-Type": meta.split(";")[0] || "text/plain" } });
}

function closeTheNetwork() {
  self.fetch = assetFetch;
  self.XMLHttpRequest = undefined;
  self.WebSocket = undefined;
  self.EventSource = undefined;
}

// ------------------------------------------------------------------------------------------------ boot

/** Run one of Pyodide's two scripts. Which blob: URLs a worker of a file:// page may load differs by engine:
 *  WebKit loads those the page made and refuses its own, Chromium the other way round. So the page's URL first,
 *  then one made here from the script's bytes (a file:// worker gets them from the page, like every asset). */
async function loadScript(name, pageURL) {
  try {
    nativeImportScripts(pageURL);
    return;
  } catch (e) {
    if (mode === "http") throw e;
  }
  const own = URL.createObjectURL(new Blob([await assetBytes(name)], { type: "text/javascript" }));
  try {
    nativeImportScripts(own);
  } finally {
    URL.revokeObjectURL(own);
  }
}

async function init(msg) {
  mark("worker-init");
  base = msg.base;
  mode = msg.mode;
  chunkBytes = msg.chunkBytes;
  for (const a of msg.assets) index.set(a.name, a);
  closeTheNetwork();
  await zstdReady(); // its wasm comes from a data: URL (assetFetch)
  let read = 0;
  onBytes = (n) => { read += n; post({ type: "download", loaded: read }); };
  // Everything the boot needs is asked for at once, so it downloads while Python starts. A file that fails its
  // check fails the start with its own error: Pyodide only logs a stdlib or wasm it could not have, and goes on
  // to a Python that dies or never comes.
  const checked = Promise.all(msg.boot.map((name) => assetBytes(name)));
  checked.catch(() => {});
  const failedCheck = checked.then(() => new Promise(() => {})); // rejects as `checked` does, else never settles
  compileMainWasmEarly();
  for (const name of ["pyodide.js", "pyodide.asm.js"]) await loadScript(name, msg.scripts[name]);
  self.importScripts = () => { throw new TypeError("importScripts is disabled in the Python worker"); };
  mark("scripts-ready");
  post({ type: "progress", phase: "boot" });
  const booting = self.loadPyodide({
    indexURL: base,
    lockFileURL: base + "pyodide-lock.json",
    stdin: () => null, // input() → EOFError
    env: { HOME: "/home/pyodide", MPLBACKEND: "agg" },
  });
  booting.catch(() => {});
  pyodide = await Promise.race([booting, failedCheck, mainWasm.then(() => new Promise(() => {}))]);
  mark("pyodide-ready");
  if (msg.interruptBuffer) {
    interrupt = new Int32Array(msg.interruptBuffer);
    pyodide.setInterruptBuffer(interrupt);
  }
  lock = JSON.parse(new TextDecoder().decode(await assetBytes("pyodide-lock.json")));
  pyodide.FS.mkdirTree(CELL_DIR);
  pyodide.FS.writeFile(`${CELL_DIR}/cell_runtime.py`, CELL_RUNTIME_PY);
  pyodide.FS.writeFile(`${CELL_DIR}/exercise_runtime.py`, EXERCISE_RUNTIME_PY); // the exercises' checker
  pyodide.runPython(`import sys\nsys.path.insert(0, ${JSON.stringify(CELL_DIR)})`);
  runner = pyodide.pyimport("cell_runtime");
  // Stop ends the worker where there is no interrupt buffer; WebKit can end it only when its loops call out
  if (msg.stoppableLoops) {
    pyodide.runPython("import cell_runtime, exercise_runtime\ncell_runtime.enable_stoppable_loops()\n"
      + "exercise_runtime.stoppable = cell_runtime.make_stoppable");
  }
  runner.set_post((stream, text) => post({ type: "stream", id: currentRun, stream, text }));
  // a run that reaches `await pause()` can be stopped between its steps: the page then asks instead of ending us
  runner.set_on_pause(() => post({ type: "pausing", id: currentRun }));
  // Rich output: a figure's PNG bytes or a widget's JSON text, never HTML (see cells/output.js).
  runner.set_display((kind, data, meta) => {
    const value = typeof data === "string" ? data : data.toJs();
    if (data && data.destroy) data.destroy();
    const m = meta.toJs({ dict_converter: Object.fromEntries });
    meta.destroy();
    post({ type: "display", id: currentRun, kind, data: value, meta: m }, value instanceof Uint8Array ? [value.buffer] : []);
  });
  if (msg.preload.length) {
    post({ type: "progress", phase: "packages" });
    await install(msg.preload);
    for (const name of msg.preload) for (const mod of lock.packages[name].imports) pyodide.runPython(`import ${mod}`);
  }
  onBytes = null;
  mark("imported");
  post({ type: "ready" });
}

// ------------------------------------------------------------------------------------------------ runs

/** Unpack these packages' wheels (dependencies first) into site-packages; all are fetched at once. */
async function install(names) {
  const wheels = names.map((name) => assetBytes(lock.packages[name].file_name));
  wheels.forEach((w) => w.catch(() => {})); // reported in order below
  for (let i = 0; i < names.length; i++) {
    const bytes = await wheels[i];
    bytesOf.delete(lock.packages[names[i]].file_name);
    pyodide.unpackArchive(bytes, "zip", { extractDir: SITE_PACKAGES });
    installed.add(names[i]);
  }
  // Only site-packages' finder forgets its listing (importlib.invalidate_caches() would also import
  // importlib.metadata, ~0.35 s in wasm).
  pyodide.runPython(`import sys
finder = sys.path_importer_cache.get(${JSON.stringify(SITE_PACKAGES)})
if finder is not None: finder.invalidate_caches()
del finder`);
}

/** The packages `code` imports that are not installed yet, with their dependencies (pyodide-lock.json). */
function packagesFor(code) {
  const proxy = runner.imports_of(code);
  const imports = proxy.toJs();
  proxy.destroy();
  const byImport = new Map();
  for (const [name, pkg] of Object.entries(lock.packages)) for (const mod of pkg.imports) byImport.set(mod, name);
  const needed = [];
  const visit = (name) => {
    if (!lock.packages[name] || needed.includes(name) || installed.has(name)) return;
    for (const dep of lock.packages[name].depends) visit(dep);
    needed.push(name);
  };
  for (const mod of imports) if (byImport.has(mod)) visit(byImport.get(mod));
  return needed;
}

async function loadPackagesOf(code, id) {
  const needed = packagesFor(code);
  if (!needed.length) return;
  const total = needed.reduce((s, name) => s + index.get(lock.packages[name].file_name).wrapperSize, 0);
  let loaded = 0;
  const report = () => post({ type: "packages", id, names: needed, loaded: Math.min(loaded, total), total });
  report();
  onBytes = (n) => { loaded += n; report(); };
  try {
    await install(needed);
  } finally {
    onBytes = null;
  }
  mark("packages-loaded");
}

async function runCell(msg) {
  currentRun = msg.id;
  if (interrupt) interrupt[0] = 0;
  let result;
  try {
    await loadPackagesOf(msg.code, msg.id);
  } catch (e) {
    currentRun = null;
    post({ type: "result", id: msg.id, result: { ok: false, repr: null, truncated: false,
      error: { type: "ImportError", message: `无法加载 Python 包：${String((e && e.message) || e)}`, traceback: "" } } });
    return;
  }
  mark("run-start");
  try {
    let proxy = runner.run_cell(msg.code, msg.filename);
    if (proxy.type === "coroutine") { // the cell awaits at its top level: Pyodide's event loop runs it
      const awaiting = proxy;
      proxy = await awaiting;
      awaiting.destroy();
    }
    result = proxy.toJs({ dict_converter: Object.fromEntries });
    proxy.destroy();
  } catch (e) {
    result = { ok: false, repr: null, truncated: false,
      error: { type: "InternalError", message: String((e && e.message) || e), traceback: "" } };
  }
  currentRun = null;
  mark("run-end");
  post({ type: "result", id: msg.id, result });
}

/** Idle: the packages the page's cells import, loaded before any run asks (runtime.js, preloadFor). */
async function preload(codes) {
  try {
    for (const code of codes) await loadPackagesOf(code, null);
    if (installed.has("matplotlib")) runner.prepare_matplotlib();
    mark("preloaded");
  } catch (e) {
    console.warn("Python worker: preload failed", e && e.message); // the run that needs it reports it
  }
}

// One message at a time, in order (a run waits for a preload or a reset before it); the page's answers to
// `need` are handled at once, since the message in progress may be waiting for them.
let queue = Promise.resolve();
self.onmessage = ({ data: msg }) => {
  if (msg.type === "stop") { // the run in progress is waiting in `await pause()` (else this arrives after it)
    if (runner && currentRun !== null && currentRun === msg.id) runner.request_stop();
    return;
  }
  if (msg.type === "asset") {
    const waiting = fromPage.get(msg.name);
    fromPage.delete(msg.name);
    if (waiting && msg.error) waiting.reject(new Error(msg.error));
    else if (waiting) waiting.resolve(new Uint8Array(msg.buffer));
    return;
  }
  queue = queue.then(() => handle(msg));
};

async function handle(msg) {
  try {
    if (msg.type === "init") await init(msg);
    else if (msg.type === "run") await runCell(msg);
    else if (msg.type === "preload") await preload(msg.codes);
    else if (msg.type === "reset") { runner.reset(); post({ type: "reset-done", id: msg.id }); }
  } catch (e) {
    const message = String((e && e.message) || e);
    if (msg.type === "init") post({ type: "init-error", message, stack: String((e && e.stack) || "") });
    else post({ type: "result", id: msg.id, result: { ok: false, repr: null, truncated: false,
      error: { type: "InternalError", message, traceback: "" } } });
  }
}
