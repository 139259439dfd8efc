// Pyodide worker (bundled to a string and started from a blob: URL by runtime.js).
//
// Assets come from one of two sources (msg.mode):
//   "http": the worker fetches them itself from their real URLs (a blob: worker shares the page's origin),
//           all at once as soon as it starts, each checked against the sha256 of the runtime index. Pyodide
//           gets the real Response of pyodide.asm.wasm, so `instantiateStreaming` compiles while it
//           downloads and V8 can keep the compiled code in its cache for the next visit.
//   "file": Chromium blocks fetch/importScripts of file:// URLs, so the main thread reads the wrapper
//           scripts and posts each asset's bytes as it arrives ({type: "asset"}); booting starts as soon
//           as the core files are here, while the wheels still load.
// `fetch` and `importScripts` are replaced by versions that serve exactly the indexed assets and refuse
// anything else: nothing else is reachable from Python/JS in this worker.
import COURSE_RUNTIME_PY from "./course_runtime.py";

let indexURL = "";
let mode = "http";
let pyodide = null;
let runner = null;
let interruptBuffer = null;
const index = new Map();   // name -> {size, sha256}
const pending = new Map(); // name -> Promise<Response | Uint8Array> (verified), consumed once
const waiting = new Map(); // file mode: name -> resolve(bytes) for assets not posted yet

const post = (msg, transfer) => self.postMessage(msg, transfer || []);
const mark = (label) => post({ type: "mark", label, t: performance.timeOrigin + performance.now() });
const MIME = { wasm: "application/wasm", json: "application/json", js: "text/javascript" };
const nativeFetch = self.fetch.bind(self);
const nativeImportScripts = self.importScripts.bind(self);

async function checkSha256(name, bytes) {
  if (!(self.crypto && crypto.subtle)) return; // not a secure context (plain http on a remote host)
  const actual = await sha256Hex(bytes);
  if (actual !== index.get(name).sha256) throw new Error(`${name}: sha256 ${actual}, expected ${index.get(name).sha256}`);
}

async function sha256Hex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

function assetName(url) {
  const u = String(url);
  if (!u.startsWith(indexURL)) return null;
  const name = decodeURIComponent(u.slice(indexURL.length).split(/[?#]/)[0]);
  return index.has(name) ? name : null;
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

// ----------------------------------------------------------------------------------------- http mode
// The Response is handed out only once its bytes are verified: a clone is read (counting progress) and
// hashed while the original's body is buffered; the original (real URL, cache metadata) goes to Pyodide.
async function fetchVerified(name) {
  const resp = await nativeFetch(indexURL + name);
  if (!resp.ok) throw new Error(`无法加载 ${name}: HTTP ${resp.status}`);
  const copy = resp.clone();
  const reader = copy.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    countBytes(value.length);
  }
  const bytes = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) { bytes.set(c, off); off += c.length; }
  await checkSha256(name, bytes);
  return resp;
}

// ----------------------------------------------------------------------------------------- file mode
function arrived(name) {
  return new Promise((resolve) => waiting.set(name, resolve));
}

async function verifiedBytes(name, bytesPromise) {
  const bytes = await bytesPromise;
  await checkSha256(name, bytes);
  return bytes;
}

function onAsset(msg) {
  const resolve = waiting.get(msg.name);
  if (resolve) { waiting.delete(msg.name); resolve(new Uint8Array(msg.buffer)); }
}

// ------------------------------------------------------------------------------------------ guards
function take(name) {
  let p = pending.get(name);
  if (p) pending.delete(name);
  else if (mode === "http") p = fetchVerified(name); // asked twice (e.g. after a failure): fetch again
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
  const resp = await asResponse(name, take(name));
  let text = await resp.text();
  text = text.replace(/\n\/\/# sourceMappingURL=[^\n]*\s*$/, "\n");
  scripts.set(name, URL.createObjectURL(new Blob([text], { type: "text/javascript" })));
}

function installNetworkGuards() {
  self.fetch = guardedFetch;
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

// ------------------------------------------------------------------------------------------- inflate
// Inflating the snapshot (~11 MB of pages) and the NumPy pack (~13 MB) takes a few hundred ms of
// DecompressionStream on a slow core; a helper worker does it on the other core while this one evaluates
// pyodide.asm.js and instantiates the wasm.  The helper sees only bytes, never the network.
const INFLATER_SOURCE = `
const gunzip = (${gunzip.toString()});
const expandSnapshot = (${expandSnapshot.toString()}); // self-contained (minified names stay consistent)
self.onmessage = async ({ data: { id, kind, buffer } }) => {
  try {
    const raw = await gunzip(new Uint8Array(buffer));
    const out = kind === "snapshot" ? expandSnapshot(raw) : raw;
    self.postMessage({ id, buffer: out.buffer }, [out.buffer]);
  } catch (e) {
    self.postMessage({ id, error: String(e && e.message || e) });
  }
};`;

/** gzip bytes → inflated bytes (native DecompressionStream); self-contained: also runs in the helper worker. */
async function gunzip(bytes) {
  return new Uint8Array(await new Response(
    new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer());
}

/** The sparse snapshot (builder/pyodide_assets.py, pack_snapshot) → the full heap image Pyodide restores. */
function expandSnapshot(raw) {
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (raw.length < 12 || dv.getUint32(0, true) !== 0x314e5343) throw new Error("memory snapshot: bad magic"); // "CSN1"
  const size = dv.getUint32(4, true);
  const count = dv.getUint32(8, true);
  const PAGE = 4096;
  const heap = new Uint8Array(size);
  let off = 12 + 4 * count;
  for (let k = 0; k < count; k++) {
    const at = dv.getUint32(12 + 4 * k, true) * PAGE;
    const len = Math.min(PAGE, size - at);
    if (len <= 0 || off + len > raw.length) throw new Error("memory snapshot: truncated");
    heap.set(raw.subarray(off, off + len), at);
    off += len;
  }
  if (off !== raw.length) throw new Error("memory snapshot: stray bytes");
  return heap;
}

let inflater = null;
let inflaterCalls = 0;
const inflaterWaiting = new Map();

/** Inflate (and for kind "snapshot" expand) gzip bytes, on a helper thread when the browser has one. */
async function inflateOffThread(kind, bytesPromise) {
  const bytes = await bytesPromise;
  if (inflater === null) {
    try {
      const url = URL.createObjectURL(new Blob([INFLATER_SOURCE], { type: "text/javascript" }));
      inflater = new Worker(url);
      URL.revokeObjectURL(url);
      inflater.onmessage = ({ data }) => {
        const done = inflaterWaiting.get(data.id);
        inflaterWaiting.delete(data.id);
        if (data.error) done.reject(new Error(data.error));
        else done.resolve(new Uint8Array(data.buffer));
      };
    } catch (e) {
      inflater = false; // no nested workers: inflate here
    }
  }
  if (!inflater) {
    const raw = await gunzip(bytes);
    return kind === "snapshot" ? expandSnapshot(raw) : raw;
  }
  const id = ++inflaterCalls;
  // Our own bytes (a fresh arrayBuffer() or a posted buffer): transferred, not copied, unless a view.
  const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
  return new Promise((resolve, reject) => {
    inflaterWaiting.set(id, { resolve, reject });
    inflater.postMessage({ id, kind, buffer: own.buffer }, [own.buffer]);
  });
}

const SITE_PACKAGES = "/lib/python3.12/site-packages";
const SHARED_LIB = /\.cpython-[^/]*\.so$|\.abi3\.so$/;

/** Write a wheel pack (builder/pyodide_assets.py, wheel_pack: one gzip stream of a JSON header and the
 *  files back to back) into site-packages; returns the paths of its Python extension modules (.so). */
async function installPack(py, packName, rawPromise) {
  const raw = await rawPromise;
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (raw.length < 8 || String.fromCharCode(...raw.subarray(0, 4)) !== "CPK1") throw new Error(`${packName}: not a wheel pack`);
  const headerLen = dv.getUint32(4, true);
  const { files } = JSON.parse(new TextDecoder().decode(raw.subarray(8, 8 + headerLen)));
  let off = 8 + headerLen;
  const made = new Set();
  const sharedLibs = [];
  for (const [name, size] of files) {
    if (name.startsWith("/") || name.split("/").includes("..")) throw new Error(`${packName}: bad path ${name}`);
    const path = `${SITE_PACKAGES}/${name}`;
    const dir = path.slice(0, path.lastIndexOf("/"));
    if (!made.has(dir)) { py.FS.mkdirTree(dir); made.add(dir); }
    py.FS.writeFile(path, raw.subarray(off, off + size));
    off += size;
    if (SHARED_LIB.test(name)) sharedLibs.push(path);
  }
  if (off !== raw.length) throw new Error(`${packName}: ${raw.length - off} stray bytes`);
  return sharedLibs;
}

function progress(phase) {
  post({ type: "progress", phase });
}

async function init(msg) {
  mark("worker-init");
  indexURL = msg.indexURL;
  mode = msg.mode;
  for (const a of msg.assets) index.set(a.name, { size: a.size, sha256: a.sha256 });
  totalBytes = msg.assets.reduce((s, a) => s + a.size, 0);
  // Everything is requested at once, core files first; wheels download while Python boots.
  for (const a of msg.assets) {
    const p = mode === "http" ? fetchVerified(a.name) : verifiedBytes(a.name, arrived(a.name));
    p.catch(() => {}); // reported when awaited
    pending.set(a.name, p);
  }
  installNetworkGuards();
  if (msg.interruptBuffer) interruptBuffer = new Int32Array(msg.interruptBuffer);

  // The heap snapshot (builder/pyodide_assets.py, memory_snapshot) and the wheel packs are inflated on a
  // helper thread while pyodide.asm.js and the wasm load here.  Pyodide needs the heap only when it
  // restores it, after its file-system set-up, which `fsInit` holds until the bytes are in.
  const snapshot = msg.snapshot ? new Uint8Array(msg.snapshot.size) : null;
  const snapshotFilled = snapshot ? inflateOffThread("snapshot", asBytes(msg.snapshot.name, take(msg.snapshot.name)))
    .then((heap) => {
      if (heap.length !== snapshot.length) throw new Error(`memory snapshot: ${heap.length} bytes, expected ${snapshot.length}`);
      snapshot.set(heap);
      mark("snapshot-inflated");
    }) : null;
  if (snapshotFilled) snapshotFilled.catch(() => {});
  const packs = msg.packs.map((pack) => {
    const raw = inflateOffThread("pack", asBytes(pack.name, take(pack.name)));
    raw.catch(() => {});
    return { ...pack, raw };
  });
  await Promise.all([prepareScript("pyodide.js"), prepareScript("pyodide.asm.js")]);
  mark("scripts-ready");
  progress("boot");
  self.importScripts(indexURL + "pyodide.js");
  pyodide = await self.loadPyodide({
    indexURL,
    lockFileURL: indexURL + msg.lockFile,
    stdLibURL: indexURL + "python_stdlib.zip",
    fullStdLib: false,
    checkAPIVersion: true,
    stdin: () => null, // input() → EOFError
    env: { ...(msg.env || { HOME: "/home/pyodide" }) },
    ...(snapshot ? { _loadSnapshot: snapshot, fsInit: () => snapshotFilled } : {}),
  });
  mark(snapshot ? "pyodide-restored" : "pyodide-booted");
  // Every visitor restores the same heap: give `random` (if a stdlib module imported it) fresh OS entropy.
  if (snapshot) pyodide.runPython("import sys\nif 'random' in sys.modules: sys.modules['random'].seed()");
  if (interruptBuffer) pyodide.setInterruptBuffer(interruptBuffer);

  progress("packages");
  // The packs (inflated natively, see above) are written into site-packages here rather than unpacked by
  // loadPackage's zipfile-in-wasm (~0.3–0.6 s for NumPy); the .so files are then loaded the way loadPackage
  // does it (async compile of all 19 before `import numpy` needs them).
  for (const pack of packs) {
    const sharedLibs = await installPack(pyodide, pack.name, pack.raw);
    if (sharedLibs.length) await pyodide._api.loadDynlibsFromPackage({ file_name: pack.wheel }, sharedLibs);
  }
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
  pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide/_course')");
  runner = pyodide.pyimport("course_runtime");
  runner.set_post((stream, text) => post({ type: "stream", id: currentRun, stream, text }));
  const warnings = [];
  for (const mod of msg.imports) {
    try {
      pyodide.runPython(`import ${mod}`);
    } catch (e) {
      if (mod === "numpy") throw e;
      warnings.push(`import ${mod} failed: ${e && e.message}`);
    }
  }
  if (warnings.length) console.warn("CoursePython:", warnings.join("\n"));
  pending.clear();
  if (inflater) { inflater.terminate(); inflater = false; }
  mark("imported");
  post({ type: "ready", warnings });
}

let currentRun = null;

function runCell(msg) {
  currentRun = msg.id;
  if (interruptBuffer) interruptBuffer[0] = 0;
  let res;
  try {
    const proxy = runner.run_cell(msg.code, msg.filename);
    res = proxy.toJs({ dict_converter: Object.fromEntries });
    proxy.destroy();
  } catch (e) {
    res = { ok: false, repr: null, truncated: false, error: { type: "InternalError", message: String(e && e.message || e), traceback: "" } };
  }
  currentRun = null;
  post({ type: "result", id: msg.id, result: res });
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  try {
    if (msg.type === "asset") onAsset(msg);
    else if (msg.type === "init") await init(msg);
    else if (msg.type === "run") runCell(msg);
    else if (msg.type === "reset") { runner.reset(); post({ type: "reset-done", id: msg.id }); }
  } catch (e) {
    if (msg.type === "init") post({ type: "init-error", message: String(e && e.message || e), stack: String(e && e.stack || "") });
    else post({ type: "result", id: msg.id, result: { ok: false, repr: null, truncated: false, error: { type: "InternalError", message: String(e && e.message || e), traceback: "" } } });
  }
};
