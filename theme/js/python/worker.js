// Pyodide worker (bundled to a string and started from a blob: URL by runtime.js).
//
// The main thread hands over every asset's bytes (ArrayBuffer, or base64/text from the file:// wrappers).
// Nothing is fetched from the network here: `fetch` and `importScripts` are replaced by versions that
// serve the in-memory assets (blob: URLs for scripts) and refuse anything else.
import COURSE_RUNTIME_PY from "./course_runtime.py";

const assets = new Map(); // name -> Uint8Array
let indexURL = "";
let pyodide = null;
let runner = null;
let interruptBuffer = null;

const post = (msg, transfer) => self.postMessage(msg, transfer || []);

function decodeBase64(b64) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(b64);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function toBytes(entry) {
  if (entry.buffer instanceof ArrayBuffer) return new Uint8Array(entry.buffer);
  if (entry.kind === "text") return new TextEncoder().encode(entry.data);
  return decodeBase64(entry.data);
}

function assetName(url) {
  const u = String(url);
  if (!u.startsWith(indexURL)) return null;
  const name = decodeURIComponent(u.slice(indexURL.length).split(/[?#]/)[0]);
  return assets.has(name) ? name : null;
}

const MIME = { wasm: "application/wasm", json: "application/json", js: "text/javascript" };

async function verify(bytes, integrity) {
  if (!integrity || !integrity.startsWith("sha256-") || !(self.crypto && crypto.subtle)) return;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  let bin = "";
  for (const b of digest) bin += String.fromCharCode(b);
  if (btoa(bin) !== integrity.slice(7)) throw new TypeError("integrity check failed");
}

const blockedFetch = async (input, init) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const name = assetName(url);
  if (name === null) throw new TypeError(`CoursePython worker: network access is disabled (${url})`);
  const bytes = assets.get(name);
  await verify(bytes, init && init.integrity);
  const ext = name.split(".").pop();
  return new Response(bytes, { status: 200, headers: { "Content-Type": MIME[ext] || "application/octet-stream" } });
};

function scriptBlobURL(name) {
  let text = new TextDecoder().decode(assets.get(name));
  text = text.replace(/\n\/\/# sourceMappingURL=[^\n]*\s*$/, "\n");
  return URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
}

const nativeImportScripts = self.importScripts.bind(self);

function installNetworkGuards() {
  self.fetch = blockedFetch;
  self.importScripts = (...urls) => {
    for (const url of urls) {
      const name = assetName(url);
      if (name === null) throw new TypeError(`CoursePython worker: network access is disabled (${url})`);
      const blobURL = scriptBlobURL(name);
      try { nativeImportScripts(blobURL); } finally { URL.revokeObjectURL(blobURL); }
    }
  };
  // Block the remaining ways to reach the network from Python/JS in this worker.
  self.XMLHttpRequest = undefined;
  self.WebSocket = undefined;
  self.EventSource = undefined;
}

function progress(phase, extra) {
  post({ type: "progress", phase, ...(extra || {}) });
}

async function init(msg) {
  indexURL = msg.indexURL;
  for (const [name, entry] of Object.entries(msg.assets)) assets.set(name, toBytes(entry));
  installNetworkGuards();
  if (msg.interruptBuffer) interruptBuffer = new Int32Array(msg.interruptBuffer);

  progress("boot");
  self.importScripts(indexURL + "pyodide.js");
  self.importScripts(indexURL + "pyodide.asm.js");
  assets.delete("pyodide.js");
  assets.delete("pyodide.asm.js");
  pyodide = await self.loadPyodide({
    indexURL,
    lockFileURL: indexURL + msg.lockFile,
    stdLibURL: indexURL + "python_stdlib.zip",
    fullStdLib: false,
    checkAPIVersion: true,
    stdin: () => null, // input() → EOFError
    env: { HOME: "/home/pyodide" },
  });
  assets.delete("pyodide.asm.wasm");
  assets.delete("python_stdlib.zip");
  if (interruptBuffer) pyodide.setInterruptBuffer(interruptBuffer);

  progress("packages");
  const errors = [];
  await pyodide.loadPackage(msg.packages, {
    checkIntegrity: true,
    messageCallback: () => {},
    errorCallback: (e) => errors.push(String(e)),
  });
  for (const name of [...assets.keys()]) if (name.endsWith(".whl")) assets.delete(name);
  if (errors.length) console.warn("CoursePython:", errors.join("\n"));

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
    if (msg.type === "init") await init(msg);
    else if (msg.type === "run") runCell(msg);
    else if (msg.type === "reset") { runner.reset(); post({ type: "reset-done", id: msg.id }); }
  } catch (e) {
    if (msg.type === "init") post({ type: "init-error", message: String(e && e.message || e), stack: String(e && e.stack || "") });
    else post({ type: "result", id: msg.id, result: { ok: false, repr: null, truncated: false, error: { type: "InternalError", message: String(e && e.message || e), traceback: "" } } });
  }
};
