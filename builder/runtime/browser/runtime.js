// The Python runtime's main-thread API, `Course.python.getRuntime()` (one per page, shared by its code cells):
//
//   await rt.load({ onProgress(p) { p.phase, p.loaded, p.total, p.label } });
//   rt.prefetch();                       // start loading when the page is idle
//   rt.preloadFor(codes);                // the page's cells: once idle, their packages load too
//   const r = await rt.run(code, { onStdout, onStderr, onDisplay(kind, data, meta), onPackages(p), cell });
//     // r = { ok, repr, error: {type, message, traceback} | null, truncated }; rejects with err.type "Stopped"
//   const { kept } = await rt.stop();   await rt.reset();   rt.state;   rt.addEventListener("statechange" | "progress", …)
//
// Python runs in a Web Worker (worker.js) started from a blob: URL, which works over http and from file://.
// The runtime's files sit next to python-runtime.js; `runtime-index.js` lists them (builder/runtime/site.py).
// Over http the worker fetches their wrapper scripts itself; from file:// (where workers may not fetch) this
// thread loads them with <script> tags and posts each payload to the worker when it asks. Stop asks a run that
// pauses (`await pause()` in a long loop, cell_runtime.py) to end at its next pause, keeping the namespace; it
// interrupts other runs with Pyodide's interrupt buffer where the page is cross-origin isolated
// (SharedArrayBuffer); otherwise, or when a run does not end in time, it ends the worker and starts a fresh one
// at once: a Stop always works, and says whether the namespace was kept.
import { decodePayload, fetchPayload, literalInto } from "./transport.js";
import { checkSha256 } from "./verify.js";

const MB = (n) => (n / 1e6).toFixed(1);
const LABELS = {
  download: (p) => `正在加载 Python 运行环境… ${MB(p.loaded)} / ${MB(p.total)} MB`,
  boot: () => "正在启动 Python…",
  packages: () => "正在加载 NumPy…",
  ready: () => "Python 已就绪",
  restart: () => "正在重启 Python…",
};
const STOP_GRACE_MS = 400; // with an interrupt buffer: how long a run may take to notice KeyboardInterrupt
// A run that pauses reaches its next `await pause()` within one step of its loop: a training step of the course's
// models takes up to ~0.3 s on a laptop and ~1.5 s on a phone's CPU; past this, the worker is ended after all.
const PAUSE_GRACE_MS = 4000;
const SCRIPTS = ["pyodide.js", "pyodide.asm.js"];
const WRAPPERS_IN_FLIGHT = 4; // file:// wrapper scripts loading at once

// WebKit (Safari, every browser on iOS) does not end a worker busy in a WebAssembly loop that never calls out
// (worker.terminate() after 停止 left it running); there the worker makes the reader's loops call out now and then
// (cell_runtime.py, enable_stoppable_loops), which costs a tight pure-Python loop about 2.4× its time. No feature test
// can tell an engine that ends such workers from one that does not: the engine's name in the user agent can.
const ENDS_BUSY_WORKERS = typeof navigator === "undefined" || !/AppleWebKit/.test(navigator.userAgent)
  || /Chrome\/|Chromium\/|Edg\//.test(navigator.userAgent);

const python = () => ((self.Course = self.Course || {}).python = self.Course.python || {});

function loadScript(url) {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = url;
    s.async = true;
    s.onload = () => { s.remove(); resolve(); };
    s.onerror = () => { s.remove(); reject(new Error(`无法加载 ${url}`)); };
    document.head.appendChild(s);
  });
}

function scriptBase() {
  const current = typeof document !== "undefined" && document.currentScript;
  const tags = typeof document !== "undefined" ? document.querySelectorAll('script[src*="python-runtime"]') : [];
  const src = (current && current.src) || (tags.length && tags[tags.length - 1].src);
  return src ? new URL(".", src).href : null;
}
const SCRIPT_BASE = scriptBase();

class StoppedError extends Error {
  constructor(message = "运行已停止", { kept = false } = {}) {
    super(message);
    this.name = "Stopped";
    this.type = "Stopped";
    this.traceback = "";
    this.kept = kept; // the run ended inside Python: the namespace is as it was when it stopped
  }
}

/** A start that failed, said so that a reader can act on it (the developer's detail goes to the console). */
function readerMessage(error, isFile) {
  const detail = String((error && error.message) || error);
  if (isFile && /Load failed|NetworkError|Failed to fetch|not allowed|blob/i.test(detail)) {
    return "这个浏览器不允许从本地文件（file://）启动 Python。网页上的其他内容都能正常阅读；想运行代码，请在解压后的"
      + "文件夹里运行 python3 -m http.server，再用浏览器打开 http://localhost:8000/，或使用 Chrome、Edge、Firefox 打开本地文件。";
  }
  if (/WebAssembly|memory|Out of memory/i.test(detail)) {
    return "Python 运行环境没能启动：这台设备的浏览器内存不够或不支持 WebAssembly。关闭其他标签页后再点一次“运行”试试。";
  }
  return "Python 运行环境没能启动。再点一次“运行”会重新加载；如果仍然失败，请换用最新版的浏览器。";
}

class PythonRuntime extends EventTarget {
  constructor(options = {}) {
    super();
    this.baseURL = options.baseURL || SCRIPT_BASE;
    if (!this.baseURL) throw new Error("Python runtime: cannot locate its files (no baseURL)");
    if (!this.baseURL.endsWith("/")) this.baseURL += "/";
    this.isFile = new URL(this.baseURL).protocol === "file:";
    this._state = "idle";
    this._index = null;
    this._scripts = null; // Promise<{name: blob: URL}> of pyodide.js and pyodide.asm.js, kept for restarts
    this._payloads = new Map(); // file://: asset name → Promise<payload bytes>, kept for restarts
    this._slot = null; // {worker, ready, interrupt, dead}
    this._loading = null; // Promise: the current worker is ready
    this._queue = [];
    this._active = null;
    this._nextId = 1;
    this._cellCounter = 0;
    this._listeners = new Set();
    this._lastProgress = null;
    this._resetWaiters = new Map();
    this.timings = []; // [label, ms since the page's timeOrigin]: where loading time goes
    this.canInterrupt = typeof SharedArrayBuffer === "function" && self.crossOriginIsolated === true;
  }

  get state() { return this._state; }

  _setState(s) {
    if (s === this._state) return;
    this._state = s;
    this.dispatchEvent(new CustomEvent("statechange", { detail: { state: s } }));
  }

  _mark(label, t = performance.now()) { this.timings.push([label, Math.round(t)]); }

  _progress(phase, loaded = 0, total = 0) {
    const p = { phase, loaded, total };
    p.label = (LABELS[phase] || (() => phase))(p);
    this._lastProgress = p;
    for (const fn of this._listeners) { try { fn(p); } catch (e) { console.error(e); } }
    this.dispatchEvent(new CustomEvent("progress", { detail: p }));
  }

  // -------------------------------------------------------------------------------------------- loading
  load(options = {}) {
    if (options.onProgress) {
      this._listeners.add(options.onProgress);
      if (this._lastProgress) { try { options.onProgress(this._lastProgress); } catch (e) { console.error(e); } }
    }
    if (!this._loading) this._start(false);
    return this._loading;
  }

  /** The reader shows signs of life: with `index`, read the small runtime index (no Python yet). */
  prepare({ index = true } = {}) { if (index) this._indexLoaded().catch(() => {}); }

  prefetch() {
    if (this._loading) return;
    // a prefetch never retries a start that failed (a file that failed its check would be fetched again for nothing):
    // the reader's next 运行 does
    const go = () => {
      if (!this._loading && !this._failedStart) this.load().catch((e) => console.warn("Python prefetch:", e));
    };
    if (typeof requestIdleCallback === "function") requestIdleCallback(go, { timeout: 5000 });
    else setTimeout(go, 1500);
  }

  preloadFor(codes) { this._preloadCodes = [...codes].map(String); }

  _indexLoaded() {
    if (!this._indexPromise) {
      this._indexPromise = (async () => {
        if (!python().index) await loadScript(this.baseURL + "runtime-index.js");
        if (!python().index) throw new Error("runtime-index.js did not register an index");
        this._index = python().index;
        this._mark("index-loaded");
        return this._index;
      })();
      this._indexPromise.catch(() => { this._indexPromise = null; });
    }
    return this._indexPromise;
  }

  _asset(name) { return this._index.assets.find((a) => a.name === name); }

  /** An asset's payload, verified: fetched (http) or read from its wrapper scripts (file://). */
  _payload(a) {
    if (!this.isFile) return fetchPayload(this.baseURL, a, this._index.chunkBytes, null);
    if (!this._payloads.has(a.name)) {
      const done = this._wrappers(a).then(async (bytes) => { await checkSha256(a.name, bytes, a.sha256); return bytes; });
      done.catch(() => this._payloads.delete(a.name)); // read again next time
      this._payloads.set(a.name, done);
    }
    return this._payloads.get(a.name);
  }

  /** file://: the wrapper scripts of `a`, a few at a time, decoded into one buffer. */
  _wrappers(a) {
    const store = (python().assets = python().assets || {});
    const q = (this._wrapperQueue = this._wrapperQueue || { inFlight: 0, waiting: [] });
    const next = () => {
      while (q.inFlight < WRAPPERS_IN_FLIGHT && q.waiting.length) { q.inFlight++; q.waiting.shift()(); }
    };
    const limited = (start) => new Promise((resolve, reject) => {
      q.waiting.push(() => start().then(resolve, reject).finally(() => { q.inFlight--; next(); }));
      next();
    });
    const bytes = new Uint8Array(a.size);
    const per = a.wrapperSize / a.wrappers.length;
    let decoded = 0;
    return Promise.all(a.wrappers.map((file, i) => limited(() => loadScript(this.baseURL + file)).then(() => {
      const key = `${a.name}/${i}`;
      const text = store[key];
      delete store[key];
      if (typeof text !== "string") throw new Error(`${file} did not register ${key}`);
      decoded += literalInto(bytes, i * this._index.chunkBytes, text);
      this._countBytes(per);
    }))).then(() => {
      if (decoded !== a.size) throw new Error(`${a.name}: ${decoded} bytes, expected ${a.size}`);
      return bytes;
    });
  }

  /** pyodide.js and pyodide.asm.js as blob: URLs this page made (the worker importScripts them). */
  _scriptURLs() {
    if (!this._scripts) {
      this._scripts = Promise.all(SCRIPTS.map(async (name) => {
        const a = this._asset(name);
        const bytes = await decodePayload(a, await this._payload(a));
        if (!this.isFile) this._countBytes(a.wrapperSize);
        return [name, URL.createObjectURL(new Blob([bytes], { type: "text/javascript" }))];
      })).then(Object.fromEntries);
      this._scripts.catch(() => { this._scripts = null; });
    }
    return this._scripts;
  }

  _countBytes(n) {
    if (!this._download) return;
    this._download.loaded = Math.min(this._download.total, this._download.loaded + n);
    this._progress("download", this._download.loaded, this._download.total);
  }

  _start(restart) {
    this._setState("loading");
    const token = {};
    this._token = token;
    this._loading = (async () => {
      const index = await this._indexLoaded();
      if (this._token !== token) return;
      const boot = index.assets.filter((a) => index.boot.includes(a.name) || SCRIPTS.includes(a.name));
      const total = boot.reduce((s, a) => s + a.wrapperSize, 0);
      this._download = restart || this._started ? null : { loaded: 0, total };
      this._progress(restart ? "restart" : this._download ? "download" : "boot", 0, total);
      this._started = true;
      const scripts = await this._scriptURLs();
      if (this._token !== token) return;
      const slot = this._spawn(index, scripts);
      this._slot = slot;
      await slot.ready;
    })().catch((e) => {
      console.error("Python runtime: load failed", e);
      const error = new Error(readerMessage(e, this.isFile));
      error.type = "LoadError";
      error.detail = String((e && e.message) || e);
      throw error;
    });
    this._loading.then(() => {
      if (this._token !== token) return;
      this._mark("ready");
      this._download = null;
      this._progress("ready", 1, 1);
      this._listeners.clear(); // onProgress belongs to one load(): a later restart is not theirs
      this._setState(this._active || this._queue.length ? "running" : "ready");
      this._pump();
    }, (error) => {
      if (this._token !== token) return;
      this._loading = null;
      this._download = null;
      this._failedStart = true;
      this._kill(this._slot);
      this._slot = null;
      this._listeners.clear();
      this._setState("idle");
      for (const r of this._queue.splice(0)) r.reject(error);
    });
    return this._loading;
  }

  _spawn(index, scripts) {
    const worker = new Worker(PythonRuntime._workerURL(), { name: "course-python" });
    const slot = { worker, dead: false, interrupt: null };
    slot.ready = new Promise((resolve, reject) => { slot.resolve = resolve; slot.reject = reject; });
    if (this.canInterrupt) slot.interrupt = new Int32Array(new SharedArrayBuffer(4));
    worker.onmessage = (ev) => this._onMessage(slot, ev.data);
    worker.onerror = (ev) => {
      if (ev.preventDefault) ev.preventDefault();
      const err = new Error(`Python worker error: ${ev.message || "unknown"}`);
      slot.reject(err);
      if (slot === this._slot) this._failActive({ type: "InternalError", message: err.message, traceback: "" });
    };
    worker.postMessage({
      type: "init",
      base: this.baseURL,
      mode: this.isFile ? "file" : "http",
      assets: index.assets,
      chunkBytes: index.chunkBytes,
      boot: index.boot,
      preload: index.preload,
      scripts,
      interruptBuffer: slot.interrupt ? slot.interrupt.buffer : null,
      stoppableLoops: !slot.interrupt && !ENDS_BUSY_WORKERS,
    });
    return slot;
  }

  _kill(slot) {
    if (!slot) return;
    slot.dead = true;
    slot.worker.terminate();
  }

  static _workerURL() {
    if (!PythonRuntime._url) PythonRuntime._url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "text/javascript" }));
    return PythonRuntime._url;
  }

  // -------------------------------------------------------------------------------------------- messages
  _onMessage(slot, msg) {
    if (msg.type === "mark") { this._mark(msg.label, msg.t - performance.timeOrigin); return; }
    if (msg.type === "need") { // file://: the worker asks for an asset's payload
      const a = this._asset(msg.name);
      const answer = (m, transfer) => { if (!slot.dead) slot.worker.postMessage(m, transfer); };
      if (!a || !this.isFile) { answer({ type: "asset", name: msg.name, error: `no asset ${msg.name}` }); return; }
      this._payload(a).then(
        (b) => { const copy = b.slice(); answer({ type: "asset", name: a.name, buffer: copy.buffer }, [copy.buffer]); },
        (e) => answer({ type: "asset", name: a.name, error: String((e && e.message) || e) }),
      );
      return;
    }
    if (msg.type === "ready") { slot.resolve(); return; }
    if (msg.type === "init-error") {
      const e = new Error(msg.message);
      e.stack = msg.stack || e.stack;
      slot.reject(e);
      return;
    }
    if (slot !== this._slot) return;
    const run = this._active;
    switch (msg.type) {
      case "download":
        if (this._download && !this.isFile) this._countBytes(msg.loaded - (slot.counted || 0));
        slot.counted = msg.loaded;
        break;
      case "progress":
        if (!this._download && this._state === "loading" && this._lastProgress?.phase !== "restart") this._progress(msg.phase);
        break;
      case "stream":
        if (run && run.id === msg.id) {
          const fn = msg.stream === "stderr" ? run.opts.onStderr : run.opts.onStdout;
          if (fn) { try { fn(msg.text); } catch (e) { console.error(e); } }
        }
        break;
      case "display":
        if (run && run.id === msg.id && run.opts.onDisplay) {
          try { run.opts.onDisplay(msg.kind, msg.data, msg.meta || {}); } catch (e) { console.error(e); }
        }
        break;
      case "pausing":
        if (run && run.id === msg.id) run.pauses = true;
        break;
      case "packages":
        if (run && run.id === msg.id && run.opts.onPackages) {
          try { run.opts.onPackages({ names: msg.names, loaded: msg.loaded, total: msg.total }); } catch (e) { console.error(e); }
        }
        break;
      case "result": {
        if (!run || run.id !== msg.id) break;
        this._finish(run);
        const r = msg.result || {};
        const result = { ok: !!r.ok, repr: r.repr ?? null, error: r.error ?? null, truncated: !!r.truncated };
        if (run.stopping && result.error && result.error.type === "KeyboardInterrupt") {
          run.reject(new StoppedError(undefined, { kept: true }));
        } else run.resolve(result);
        this._pump();
        break;
      }
      case "reset-done": {
        const done = this._resetWaiters.get(msg.id);
        if (done) { this._resetWaiters.delete(msg.id); done(); }
        break;
      }
    }
  }

  _finish(run) { if (this._active === run) this._active = null; }

  _pump() {
    if (this._active || this._state === "loading" || this._state === "idle") return;
    const next = this._queue.shift();
    if (!next) {
      this._setState("ready");
      this._preloadWhenIdle();
      return;
    }
    this._active = next;
    this._setState("running");
    this._slot.worker.postMessage({ type: "run", id: next.id, code: next.code, filename: next.filename });
  }

  /** Once idle: the packages the page's cells import (e.g. matplotlib) load in the background, so that a
   *  first figure does not wait for them (a page that never plots loads nothing more). */
  _preloadWhenIdle() {
    const codes = this._preloadCodes;
    if (!codes || !codes.length || this._preloadedFor === this._slot) return;
    this._preloadedFor = this._slot;
    this._slot.worker.postMessage({ type: "preload", codes });
  }

  _failActive(error) {
    const run = this._active;
    if (run) { this._finish(run); run.resolve({ ok: false, repr: null, error, truncated: false }); }
  }

  // -------------------------------------------------------------------------------------------- public API
  run(code, opts = {}) {
    const id = this._nextId++;
    const cell = opts.cell != null ? String(opts.cell) : String(++this._cellCounter);
    return new Promise((resolve, reject) => {
      this._queue.push({ id, code: String(code), filename: `<cell-${cell}>`, opts, resolve, reject });
      if (!this._loading) this.load().catch(() => {});
      else this._pump();
    });
  }

  /** 停止: → {kept}: whether the namespace survived (the run ended inside Python) or the worker was replaced. */
  async stop() {
    const run = this._active;
    for (const r of this._queue.splice(0)) r.reject(new StoppedError());
    if (!run) return { kept: true };
    const ended = async (ms) => {
      const t0 = performance.now();
      while (this._active === run && performance.now() - t0 < ms) await new Promise((r) => setTimeout(r, 20));
      return this._active !== run;
    };
    if (this._slot && run.pauses) { // it waits in `await pause()` now and then: ask it to end there
      run.stopping = true;
      this._slot.worker.postMessage({ type: "stop", id: run.id });
      if (await ended(PAUSE_GRACE_MS)) return { kept: true };
    }
    if (this._slot && this._slot.interrupt) {
      run.stopping = true;
      this._slot.interrupt[0] = 2; // SIGINT → KeyboardInterrupt; the namespace is kept
      if (await ended(STOP_GRACE_MS)) return { kept: true };
    }
    this._finish(run);
    run.reject(new StoppedError());
    this._restart();
    return { kept: false };
  }

  _restart() {
    this._kill(this._slot);
    this._slot = null;
    for (const done of this._resetWaiters.values()) done();
    this._resetWaiters.clear();
    this._cellCounter = 0;
    this._preloadedFor = null;
    this._start(true).catch(() => {});
  }

  async reset() {
    for (const r of this._queue.splice(0)) r.reject(new StoppedError("命名空间已重置"));
    this._cellCounter = 0;
    if (this._active) { // a run is executing: a fresh worker is the only way
      const run = this._active;
      this._finish(run);
      run.reject(new StoppedError());
      this._restart();
      return;
    }
    if (!this._slot || this._state !== "ready") return;
    const id = this._nextId++;
    await new Promise((resolve) => {
      this._resetWaiters.set(id, resolve);
      this._slot.worker.postMessage({ type: "reset", id });
    });
  }
}

let singleton = null;
function getRuntime(options) {
  if (!singleton) singleton = new PythonRuntime(options);
  return singleton;
}

let WORKER_SOURCE = "";
export function install(workerSource) {
  WORKER_SOURCE = workerSource;
  if (typeof window !== "undefined" && !python().getRuntime) {
    Object.assign(python(), { getRuntime, PythonRuntime, StoppedError, version: "2" });
  }
}
