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
    env: { HOME: "/home/pyodide" },
  });
  mark("pyodide-booted");
  if (interruptBuffer) pyodide.setInterruptBuffer(interruptBuffer);

  progress("packages");
  // loadPackage (async compile of all 19 NumPy .so files) measured faster than unpacking the wheel and
  // letting `import numpy` dlopen them synchronously.
  const errors = [];
  await pyodide.loadPackage(msg.packages, {
    checkIntegrity: false, // every asset was checked against the runtime index's sha256 above
    messageCallback: () => {},
    errorCallback: (e) => errors.push(String(e)),
  });
  if (errors.length) console.warn("CoursePython:", errors.join("\n"));
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
