// Pyodide worker (bundled to a string and started from a blob: URL by runtime.js).
//
// Every asset ships once, as wrapper scripts holding its payload (transport.js, builder/runtime/wrappers.py),
// which comes from one of two sources (msg.mode):
//   "http": the worker fetches the wrapper scripts itself (a blob: worker shares the page's origin), all at
//           once as soon as it starts, and reads the payload out of their bytes;
//   "file": Chromium blocks fetch/importScripts of file:// URLs, so the main thread loads the wrapper
//           scripts and posts each asset's payload as it arrives ({type: "asset"}); booting starts as soon
//           as the core files are here, while the wheels still load.
// Either way each payload is checked against the sha256 of the runtime index, then inflated if the index
// says `encoding: "zstd"` (zstd.js), and pyodide.asm.wasm is compiled from the inflated bytes.
// `assetBytes(name)` serves any indexed asset the same way later on (lazy ones: index `lazy`): the optional
// packs (matplotlib & co.) that a cell's imports need (`loadOptional`).
// The main wasm, the memory snapshot and the wheel packs (with a boot bundle), and the optional packs that the
// page asks for early (`early`), are not fetched here: the unpacker worker (unpacker.js) that the page starts
// alongside fetches (or is posted), verifies and inflates them, and sends them over a port.
// `fetch` and `importScripts` are replaced by versions that serve exactly the indexed assets and refuse
// anything else: nothing else is reachable from Python/JS in this worker.
import COURSE_RUNTIME_PY from "./course_runtime.py";
import { restoreDataSegment, wasmDataSegment } from "./snapshot_data.js";
import { relinkSnapshotLibraries } from "./snapshot_libs.js";
import { checkSha256 } from "./verify.js";
import { optionalPackagesFor } from "./optional-imports.js";
import { SITE_PACKAGES, installPack } from "./packs.js";
import { decodePayload, fetchPayload } from "./transport.js";
import { zstdReady } from "./zstd.js";

let indexURL = "";
let mode = "http";
let pyodide = null;
let runner = null;
let interruptBuffer = null;
let unpackerPort = null;
const index = new Map();   // name -> {size, sha256, encoding, decodedSize, wrappers, wrapperSize, lazy}
let chunkBytes = 0;
const pending = new Map(); // name -> Promise<Response | Uint8Array> (verified), consumed once
const waiting = new Map(); // file mode: name -> resolve(bytes) for assets not posted yet
let optional = { packages: {} }; // index.optional: which imports need which lazy pack (builder/runtime/optional.py)
const installedOptional = new Set();
let earlyPacks = new Set(); // optional packs the unpacker brings along with the boot (init `early`, runtime.js)

const post = (msg, transfer) => self.postMessage(msg, transfer || []);
const mark = (label) => post({ type: "mark", label, t: performance.timeOrigin + performance.now() });
const MIME = { wasm: "application/wasm", json: "application/json", js: "text/javascript" };
const nativeFetch = self.fetch.bind(self);
const nativeImportScripts = self.importScripts.bind(self);

function checkAsset(name, bytes) {
  return checkSha256(name, bytes, index.get(name).sha256);
}


const bundledFiles = new Set(); // files Pyodide fetches that come in the boot bundle (the stdlib zip)

function assetName(url) {
  const u = String(url);
  if (!u.startsWith(indexURL)) return null;
  const name = decodeURIComponent(u.slice(indexURL.length).split(/[?#]/)[0]);
  return index.has(name) || bundledFiles.has(name) ? name : null;
}

// ------------------------------------------------------------------------------------ download progress
let loadedBytes = 0;
let totalBytes = 0;
let lastProgress = 0;
function countBytes(n, force) {
  loadedBytes += n;
  const now = performance.now();
  if (force || now - lastProgress > 100 || loadedBytes >= totalBytes) {
    lastProgress = now;
    post({ type: "download", loaded: Math.min(loadedBytes, totalBytes), total: totalBytes });
  }
}

// ------------------------------------------------------------------------------------- the main wasm
// pyodide.asm.wasm is compiled from the moment its bytes are inflated, on V8's background threads, while this
// thread reads the other assets and evaluates pyodide.asm.js — instead of only when Pyodide asks for it,
// after that evaluation.  Its payload matched the sha256 of the runtime index before it was inflated; the
// module is instantiated (our WebAssembly.instantiateStreaming, installNetworkGuards) when Pyodide asks.
// What Pyodide's fetch gets is an empty stand-in Response that maps to the compiled module.
const MAIN_WASM = "pyodide.asm.wasm";
const compiledWasm = new WeakMap(); // stand-in Response -> Promise<WebAssembly.Module>

/** The stand-in for a module being compiled, once `checked` (its sha256) has passed. */
async function wasmStandIn(module, checked) {
  module.catch(() => {}); // a failed compile is reported when instantiated, after the hash had its say
  await checked;
  const standIn = new Response(null, { status: 200, headers: { "Content-Type": MIME.wasm } });
  compiledWasm.set(standIn, module);
  return standIn;
}

// ------------------------------------------------------------------------------------- both modes
// Nothing is handed out before its payload is verified.  http: the wrapper scripts are fetched (HTTP cache)
// and decoded into one buffer of the indexed size (transport.js); file: the page posts the payload.
function arrived(name) {
  return new Promise((resolve, reject) => waiting.set(name, { resolve, reject }));
}

/** One asset's verified payload.  `onBytes(n)` counts what was read (default: the boot's download progress;
 *  file://: called once with the wrapper bytes when the page has posted the whole payload). */
async function payloadOf(name, onBytes = null) {
  const a = index.get(name);
  if (mode === "http") return fetchPayload(indexURL, a, chunkBytes, onBytes || countBytes, nativeFetch);
  const got = arrived(name);
  if (a.lazy) post({ type: "need", name }); // the page loads lazy assets' wrappers only when asked
  const payload = await got;
  await checkAsset(name, payload);
  if (onBytes) onBytes(a.wrapperSize);
  return payload;
}

// The inflated wasm's bytes: the memory snapshot is restored with its data segment (snapshot_data.js).
let wasmArrived = null;
const mainWasmBytes = new Promise((resolve) => { wasmArrived = resolve; });

async function fetchVerified(name, onBytes = null) {
  const bytes = await decodePayload(index.get(name), await payloadOf(name, onBytes));
  return name === MAIN_WASM ? compileMainWasm(bytes) : bytes;
}

function compileMainWasm(bytes) {
  wasmArrived(bytes);
  return wasmStandIn(WebAssembly.compile(bytes), Promise.resolve());
}

/** Any indexed asset's bytes (verified, inflated when the index says so), e.g. an optional pack (lazy). */
function assetBytes(name, onBytes = null) {
  if (!index.has(name)) return Promise.reject(new Error(`CoursePython worker: no asset ${name}`));
  return fetchVerified(name, onBytes);
}

function onAsset(msg) {
  const w = waiting.get(msg.name);
  if (!w) return;
  waiting.delete(msg.name);
  if (msg.error) w.reject(new Error(msg.error));
  else w.resolve(new Uint8Array(msg.buffer));
}

// ------------------------------------------------------------------------------------------ guards
function take(name) {
  let p = pending.get(name);
  if (p) pending.delete(name);
  else if (bundledFiles.has(name)) throw new TypeError(`CoursePython worker: ${name} was already consumed`);
  else if (mode === "http" || index.get(name).lazy) p = fetchVerified(name); // asked twice: load again
  else throw new TypeError(`CoursePython worker: ${name} was already consumed`);
  return p;
}

async function asResponse(name, source) {
  const got = await source;
  if (got instanceof Response) return got;
  const ext = name.split(".").pop();
  return new Response(got, { status: 200, headers: { "Content-Type": MIME[ext] || "application/octet-stream" } });
}

const guardedFetch = async (input) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const name = assetName(url);
  if (name === null) throw new TypeError(`CoursePython worker: network access is disabled (${url})`);
  return asResponse(name, take(name));
};

const scripts = new Map(); // name -> blob: URL of a verified script, ready for the synchronous importScripts
async function prepareScript(name) {
  const bytes = await asBytes(name, take(name));
  // Cut a trailing `//# sourceMappingURL=` line (the .map files are not shipped), without decoding the text.
  const tail = new TextDecoder().decode(bytes.subarray(Math.max(0, bytes.length - 300)));
  const m = /\n\/\/# sourceMappingURL=[^\n]*\s*$/.exec(tail);
  const end = m ? bytes.length - new TextEncoder().encode(tail.slice(m.index + 1)).length : bytes.length;
  scripts.set(name, URL.createObjectURL(new Blob([bytes.subarray(0, end)], { type: "text/javascript" })));
}

const nativeInstantiateStreaming = WebAssembly.instantiateStreaming;

function installNetworkGuards() {
  self.fetch = guardedFetch;
  WebAssembly.instantiateStreaming = async (source, imports) => {
    const resp = await source;
    const module = compiledWasm.get(resp);
    if (!module) return nativeInstantiateStreaming(resp, imports);
    compiledWasm.delete(resp);
    const compiled = await module;
    return { module: compiled, instance: await WebAssembly.instantiate(compiled, imports) };
  };
  self.importScripts = (...urls) => {
    for (const url of urls) {
      const name = assetName(url);
      const blobURL = name && scripts.get(name);
      if (!blobURL) throw new TypeError(`CoursePython worker: network access is disabled (${url})`);
      scripts.delete(name);
      try { nativeImportScripts(blobURL); } finally { URL.revokeObjectURL(blobURL); }
    }
  };
  // Block the remaining ways to reach the network from Python/JS in this worker.
  self.XMLHttpRequest = undefined;
  self.WebSocket = undefined;
  self.EventSource = undefined;
}

async function asBytes(name, source) {
  const got = await source;
  return got instanceof Response ? new Uint8Array(await got.arrayBuffer()) : got;
}

// ------------------------------------------------------------------------------------------ unpacked
// The snapshot and the wheel packs come inflated and verified from the unpacker worker (unpacker.js) that
// the page started next to this one, over a MessagePort.
const unpacked = new Map(); // name -> {promise, resolve, reject}

function unpackedBytes(name) {
  if (!unpacked.has(name)) {
    const entry = {};
    entry.promise = new Promise((resolve, reject) => { entry.resolve = resolve; entry.reject = reject; });
    entry.promise.catch(() => {}); // reported when awaited
    unpacked.set(name, entry);
  }
  return unpacked.get(name).promise;
}

function listenToUnpacker(port) {
  port.onmessage = ({ data }) => {
    unpackedBytes(data.name);
    const entry = unpacked.get(data.name);
    if (data.error) entry.reject(new Error(data.error));
    else entry.resolve(new Uint8Array(data.buffer));
  };
}


function progress(phase) {
  post({ type: "progress", phase });
}

async function init(msg) {
  mark("worker-init");
  zstdReady().catch(() => {}); // its fetch() of a data: URL, before the guards below (a failure shows at the first decode)
  indexURL = msg.indexURL;
  mode = msg.mode;
  for (const a of msg.assets) index.set(a.name, a);
  chunkBytes = msg.chunkBytes;
  if (msg.optional) optional = msg.optional;
  earlyPacks = new Set(msg.early || []);
  // Everything is requested at once, core files first.  The snapshot and the packs are the unpacker's.
  const forUnpacker = new Set([...(msg.snapshot ? [msg.snapshot.name] : []), ...msg.packs.map((p) => p.name), ...earlyPacks,
    ...(msg.unpackWasm ? [MAIN_WASM] : []),
    ...msg.assets.filter((a) => a.parts).map((a) => a.name)]); // the boot bundle holds the snapshot and the packs
  totalBytes = msg.assets.reduce((s, a) => s + (forUnpacker.has(a.name) || a.lazy ? 0 : a.wrapperSize), 0);
  for (const name of earlyPacks) unpackedBytes(name); // expected from the unpacker (not fetched here)
  if (forUnpacker.size) {
    if (!msg.unpackerPort) throw new Error("CoursePython worker: no unpacker for the snapshot and the packs");
    listenToUnpacker(msg.unpackerPort);
    unpackerPort = msg.unpackerPort;
  }
  // The main wasm, when the unpacker brings it (runtime.js: inflated on its thread, and kept in its cache of
  // inflated bytes for the next visit), is compiled as soon as it is here.
  if (forUnpacker.has(MAIN_WASM)) pending.set(MAIN_WASM, unpackedBytes(MAIN_WASM).then(compileMainWasm));
  for (const a of msg.assets) {
    for (const part of a.parts || []) {
      if (part.kind !== "file") continue;
      bundledFiles.add(part.name); // e.g. python_stdlib.zip, which Pyodide fetches: answered from the bundle
      pending.set(part.name, unpackedBytes(part.name));
    }
    if (forUnpacker.has(a.name) || a.lazy) continue;
    const p = fetchVerified(a.name);
    p.catch(() => {}); // reported when awaited
    pending.set(a.name, p);
  }
  installNetworkGuards();
  if (msg.interruptBuffer) interruptBuffer = new Int32Array(msg.interruptBuffer);

  // The heap snapshot (builder/runtime/snapshot.py, memory_snapshot) and the wheel packs are inflated by the
  // unpacker while pyodide.asm.js and the wasm load here.  Pyodide needs the heap only when it
  // restores it, after its file-system set-up, which `fsInit` holds until the bytes are in.
  const snapshot = msg.snapshot ? new Uint8Array(msg.snapshot.size) : null;
  const snapshotFilled = snapshot ? Promise.all([unpackedBytes(msg.snapshot.name), mainWasmBytes])
    .then(([heap, wasm]) => {
      if (heap.length !== snapshot.length) throw new Error(`memory snapshot: ${heap.length} bytes, expected ${snapshot.length}`);
      snapshot.set(heap);
      if (msg.snapshot.dataXor) restoreDataSegment(snapshot, wasmDataSegment(wasm), msg.snapshot.dataXor);
      mark("snapshot-inflated");
    }) : null;
  if (snapshotFilled) snapshotFilled.catch(() => {});
  const packs = msg.packs.map((pack) => ({ ...pack, raw: unpackedBytes(pack.name) }));
  const wasmChecked = pending.get(MAIN_WASM); // Pyodide takes it (once) while booting
  await Promise.all([prepareScript("pyodide.js"), prepareScript("pyodide.asm.js")]);
  mark("scripts-ready");
  progress("boot");
  self.importScripts(indexURL + "pyodide.js");
  const booting = self.loadPyodide({
    indexURL,
    lockFileURL: indexURL + msg.lockFile,
    stdLibURL: indexURL + "python_stdlib.zip",
    fullStdLib: false,
    checkAPIVersion: true,
    stdin: () => null, // input() → EOFError
    env: { ...(msg.env || { HOME: "/home/pyodide" }) },
    ...(snapshot ? { _loadSnapshot: snapshot, fsInit: () => snapshotFilled } : {}),
  });
  // Pyodide does not stop on some failures: when the fsInit hook fails it goes on to restore an empty heap
  // (and reports "invalid magic number"); when the wasm cannot be had it only logs "wasm instantiation
  // failed!" and waits forever.  A snapshot or wasm that failed to arrive (e.g. its sha256) is the error.
  booting.catch(() => {});
  const failed = (p) => p.then(() => new Promise(() => {})); // rejects when p does, else never settles
  pyodide = await Promise.race([booting, ...[snapshotFilled, wasmChecked].filter(Boolean).map(failed)]);
  mark(snapshot ? "pyodide-restored" : "pyodide-booted");
  if (interruptBuffer) pyodide.setInterruptBuffer(interruptBuffer);

  progress("packages");
  // The packs (inflated natively, see above) are written into site-packages here rather than unpacked by
  // loadPackage's zipfile-in-wasm (~0.3–0.6 s for NumPy); the .so files are then loaded the way loadPackage
  // does it (async compile of all 19 before `import numpy` needs them).
  const dynlibs = snapshot && msg.snapshot.dynlibs;
  for (const pack of packs) {
    const sharedLibs = installPack(pyodide.FS, pack.name, await pack.raw);
    if (sharedLibs.length && !dynlibs) await pyodide._api.loadDynlibsFromPackage({ file_name: pack.wheel }, sharedLibs);
  }
  if (dynlibs) await relinkSnapshotLibraries(pyodide._module, dynlibs, snapshot);
  // Every visitor restores the same heap (made from a fixed entropy stream: builder/runtime/snapshot.cjs): give
  // `random` (if a stdlib module imported it) and NumPy's global generator (np.random.rand & co.) fresh OS entropy
  // — NumPy's once its extension modules are linked again.
  if (snapshot) pyodide.runPython(`import sys
if 'random' in sys.modules: sys.modules['random'].seed()
if 'numpy.random' in sys.modules: sys.modules['numpy.random'].seed()`);
  // Pyodide keeps its options: let the 36 MB heap image go now that it has been restored and relinked.
  if (snapshot && pyodide._api && pyodide._api.config) pyodide._api.config._loadSnapshot = null;
  // Only site-packages' finder forgets its listing: importlib.invalidate_caches() would also import
  // importlib.metadata (CPython 3.12), ~0.35 s here.
  pyodide.runPython(`import sys
finder = sys.path_importer_cache.get(${JSON.stringify(SITE_PACKAGES)})
if finder is not None: finder.invalidate_caches()
del finder`);
  mark("packages-loaded");

  progress("import");
  pyodide.FS.mkdirTree("/home/pyodide/_course");
  pyodide.FS.writeFile("/home/pyodide/_course/course_runtime.py", COURSE_RUNTIME_PY);
  // (already imported when the snapshot was made with it: builder/runtime/snapshot.py, COURSE_DIR)
  pyodide.runPython("import sys\nif '/home/pyodide/_course' not in sys.path: sys.path.insert(0, '/home/pyodide/_course')");
  runner = pyodide.pyimport("course_runtime");
  runner.set_post((stream, text) => post({ type: "stream", id: currentRun, stream, text }));
  // Rich output: bytes (a figure's PNG) or JSON text (a course widget), never HTML (see cells/output.js).
  runner.set_display((kind, data, meta) => {
    const value = typeof data === "string" ? data : data.toJs();
    if (data && data.destroy) data.destroy();
    const m = meta.toJs({ dict_converter: Object.fromEntries });
    meta.destroy();
    post({ type: "display", id: currentRun, kind, data: value, meta: m }, value instanceof Uint8Array ? [value.buffer] : []);
  });
  // numpy before "ready" (nearly every cell needs it); the other packages (attention_core, ~0.1 s) once the
  // page says the runtime is idle ({type: "warm"}), so that they never delay a run the reader is waiting for.
  pyodide.runPython("import numpy");
  laterImports = msg.imports.filter((mod) => mod !== "numpy");
  pending.clear();
  mark("imported");
  post({ type: "ready", warnings: [] });
  if (unpackerPort) unpackerPort.postMessage({ type: "store" }); // it may now keep its bytes for the next visit
}

let laterImports = [];
function warmImports() {
  const warnings = [];
  for (const mod of laterImports.splice(0)) {
    try {
      pyodide.runPython(`import ${mod}`);
    } catch (e) {
      warnings.push(`import ${mod} failed: ${e && e.message}`);
    }
  }
  if (warnings.length) console.warn("CoursePython:", warnings.join("\n"));
  mark("warm-imported");
}

// ------------------------------------------------------------------------------ optional packages
// A cell that imports matplotlib (or another optional package: index.optional, builder/runtime/optional.py)
// gets its packs (and their dependencies) before it runs.  The packs are lazy assets of the runtime index,
// shipped like every other asset (wrapper scripts, transport.js): `assetBytes` fetches them (http) or asks
// the page for them (file://), checks their sha256, inflates them (zstd.js) and writes them into site-packages
// like the NumPy pack.

/** Names of the optional packages `code` needs that are not installed yet, dependencies first. */
function optionalNeeds(code) {
  const proxy = runner.imports_of(code);
  const imports = proxy.toJs();
  proxy.destroy();
  return optionalPackagesFor(optional.packages, imports, installedOptional);
}

async function loadOptional(names, runId) {
  const packs = names.map((name) => ({ name, ...optional.packages[name] }));
  for (const p of packs) {
    if (!index.has(p.pack)) throw new Error(`CoursePython worker: no asset ${p.pack}`);
  }
  // progress in the bytes that travel: the packs' wrapper scripts
  const total = packs.reduce((s, p) => s + index.get(p.pack).wrapperSize, 0);
  let loaded = 0;
  let last = 0;
  const report = (n, force) => {
    loaded += n;
    const now = performance.now();
    if (force || now - last > 100) { last = now; post({ type: "packages", id: runId, names, loaded: Math.min(loaded, total), total }); }
  };
  report(0, true);
  mark("optional-start");
  if (packs.some((p) => earlyPacks.has(p.pack))) mark("optional-from-unpacker");
  // all requested at once (file://: the page loads them in index order), installed in dependency order
  // those the unpacker brought with the boot are (being) inflated there; the rest are fetched now
  const bytes = packs.map((p) => (earlyPacks.has(p.pack)
    ? unpackedBytes(p.pack).then((b) => { report(index.get(p.pack).wrapperSize); return b; }, () => assetBytes(p.pack, (n) => report(n)))
    : assetBytes(p.pack, (n) => report(n))));
  bytes.forEach((b) => b.catch(() => {}));
  for (let i = 0; i < packs.length; i++) {
    const sharedLibs = installPack(pyodide.FS, packs[i].pack, await bytes[i]);
    if (sharedLibs.length) await pyodide._api.loadDynlibsFromPackage({ file_name: packs[i].wheel }, sharedLibs);
    installedOptional.add(packs[i].name);
  }
  report(0, true);
  pyodide.runPython(`import sys
finder = sys.path_importer_cache.get(${JSON.stringify(SITE_PACKAGES)})
if finder is not None: finder.invalidate_caches()
del finder`);
  mark("optional-installed");
}

let currentRun = null;

// One optional load at a time (a run may come while the idle preload below is still loading).
let optionalChain = Promise.resolve();
function ensureOptional(code, runId) {
  const next = optionalChain.then(() => {
    const needs = optionalNeeds(code);
    return needs.length ? loadOptional(needs, runId) : null;
  });
  optionalChain = next.catch(() => {});
  return next;
}

/** Idle preload ({type: "warm", preload}): the packs the page's own cells import, and matplotlib's first
 *  import, before the reader clicks — a page that never plots sends nothing and loads nothing. */
async function preloadOptional(codes) {
  try {
    for (const code of codes || []) await ensureOptional(code, null);
    if (installedOptional.has("matplotlib")) runner.prepare_matplotlib();
    mark("optional-preloaded");
  } catch (e) {
    console.warn("CoursePython: preload failed", e && e.message); // the run that needs it reports it
  }
}

async function runCell(msg) {
  currentRun = msg.id;
  if (interruptBuffer) interruptBuffer[0] = 0;
  let res;
  try {
    await ensureOptional(msg.code, msg.id);
  } catch (e) {
    currentRun = null;
    post({ type: "result", id: msg.id, result: { ok: false, repr: null, truncated: false,
      error: { type: "ImportError", message: `无法加载 Python 包：${String(e && e.message || e)}`, traceback: "" } } });
    return;
  }
  mark("run-start");
  try {
    // (the cell would set matplotlib up itself, course_runtime.execute_notebook_cell; done here first so that the
    // timings show the set-up apart from the cell's own work)
    if (installedOptional.has("matplotlib") && !runner.matplotlib_ready()) {
      const proxy = runner.imports_of(msg.code);
      const imports = proxy.toJs();
      proxy.destroy();
      if (imports.includes("matplotlib")) { runner.prepare_matplotlib(); mark("matplotlib-ready"); }
    }
    const proxy = runner.run_cell(msg.code, msg.filename);
    res = proxy.toJs({ dict_converter: Object.fromEntries });
    proxy.destroy();
  } catch (e) {
    res = { ok: false, repr: null, truncated: false, error: { type: "InternalError", message: String(e && e.message || e), traceback: "" } };
  }
  currentRun = null;
  mark("run-end");
  post({ type: "result", id: msg.id, result: res });
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  try {
    if (msg.type === "asset") onAsset(msg);
    else if (msg.type === "init") await init(msg);
    else if (msg.type === "run") await runCell(msg);
    else if (msg.type === "warm") { warmImports(); await preloadOptional(msg.preload); }
    else if (msg.type === "reset") { runner.reset(); post({ type: "reset-done", id: msg.id }); }
  } catch (e) {
    if (msg.type === "init") post({ type: "init-error", message: String(e && e.message || e), stack: String(e && e.stack || "") });
    else post({ type: "result", id: msg.id, result: { ok: false, repr: null, truncated: false, error: { type: "InternalError", message: String(e && e.message || e), traceback: "" } } });
  }
};
