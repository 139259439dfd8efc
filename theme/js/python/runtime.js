// Main-thread API of the self-hosted Python runtime: window.CoursePython.
//
//   const rt = CoursePython.getRuntime();        // one per page, shared by all code cells
//   await rt.load({ onProgress(p) { p.phase, p.loaded, p.total, p.label } });
//   rt.prefetch();                               // load when the page is idle
//   const r = await rt.run(code, { onStdout, onStderr, cell });
//     // r = { ok, repr, error: {type, message, traceback} | null, truncated }
//     // rejects with err.type === "Stopped" when stop() interrupts it
//   await rt.stop();   await rt.reset();   rt.state;   rt.addEventListener("statechange", …)
//
// Pyodide never runs on the main thread: it lives in a Worker started from a blob: URL (works on http
// and file://).  Assets are located next to python-runtime.js (document.currentScript), so any sub-path
// works.  On http the main thread fetches them with byte progress; on file:// it injects the
// `<name>.js` wrapper scripts written by builder/pyodide_assets.py.  Either way the bytes stay in this
// thread (for restarts after stop()) and are copied to the worker.

const MB = (n) => (n / 1e6).toFixed(1);
const LABELS = {
  download: (p) => `正在加载 Python 运行环境… ${MB(p.loaded)} / ${MB(p.total)} MB`,
  boot: () => "正在启动 Python…",
  packages: () => "正在安装 NumPy…",
  import: () => "正在导入 numpy 与 attention_core…",
  ready: () => "Python 已就绪",
  restart: () => "正在重启 Python…",
};
const STOP_GRACE_MS = 400; // interrupt-buffer path only (cross-origin isolated pages)
const SPARE_AFTER_MS = 1000; // a run this long may get stopped: boot a standby worker meanwhile

function scriptBase() {
  const cs = typeof document !== "undefined" && document.currentScript;
  let src = cs && cs.src;
  if (!src && typeof document !== "undefined") {
    const tags = document.querySelectorAll('script[src*="python-runtime"]');
    if (tags.length) src = tags[tags.length - 1].src;
  }
  return src ? new URL(".", src).href : null;
}
const SCRIPT_BASE = scriptBase();

function loadScript(url) {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = url;
    s.async = false;
    s.onload = () => { s.remove(); resolve(); };
    s.onerror = () => { s.remove(); reject(new Error(`无法加载 ${url}`)); };
    document.head.appendChild(s);
  });
}

class StoppedError extends Error {
  constructor(message = "运行已停止") {
    super(message);
    this.name = "Stopped";
    this.type = "Stopped";
    this.traceback = "";
  }
}

class PythonRuntime extends EventTarget {
  constructor(options = {}) {
    super();
    this.baseURL = options.baseURL || SCRIPT_BASE;
    if (!this.baseURL) throw new Error("CoursePython: cannot locate assets (no baseURL)");
    if (!this.baseURL.endsWith("/")) this.baseURL += "/";
    this.isFile = new URL(this.baseURL).protocol === "file:";
    this._state = "idle";
    this._index = null;
    this._assets = null;        // name -> {buffer} (http) or {kind, data} (file://)
    this._assetsPromise = null;
    this._loadPromise = null;   // resolves when the current worker is ready
    this._slot = null;          // {worker, ready, interrupt, …} serving runs
    this._spare = null;         // standby slot for stop()
    this._progressListeners = new Set();
    this._lastProgress = null;
    this._queue = [];           // pending runs {id, code, filename, opts, resolve, reject}
    this._active = null;        // the run currently in the worker
    this._nextId = 1;
    this._cellCounter = 0;
    this._resetWaiters = new Map();
    this.warnings = [];
    this._sab = typeof self !== "undefined" && self.crossOriginIsolated && typeof SharedArrayBuffer === "function";
  }

  get state() { return this._state; }

  _setState(s) {
    if (s === this._state) return;
    this._state = s;
    this.dispatchEvent(new CustomEvent("statechange", { detail: { state: s } }));
  }

  _progress(phase, loaded = 0, total = 0) {
    const p = { phase, loaded, total };
    p.label = (LABELS[phase] || (() => phase))(p);
    this._lastProgress = p;
    for (const fn of this._progressListeners) { try { fn(p); } catch (e) { console.error(e); } }
    this.dispatchEvent(new CustomEvent("progress", { detail: p }));
  }

  load(options = {}) {
    if (options.onProgress) {
      this._progressListeners.add(options.onProgress);
      if (this._lastProgress) { try { options.onProgress(this._lastProgress); } catch (e) { console.error(e); } }
    }
    if (!this._loadPromise) this._startWorker();
    return this._loadPromise;
  }

  prefetch() {
    if (this._loadPromise) return;
    const go = () => { if (!this._loadPromise) this.load().catch((e) => console.warn("CoursePython prefetch:", e)); };
    if (typeof requestIdleCallback === "function") requestIdleCallback(go, { timeout: 5000 });
    else setTimeout(go, 1500);
  }

  // ---------------------------------------------------------------- assets
  _fetchAssets() {
    if (!this._assetsPromise) {
      this._assetsPromise = (async () => {
        if (!self.__pyRuntimeIndex) await loadScript(this.baseURL + "runtime-index.js");
        const index = self.__pyRuntimeIndex;
        if (!index) throw new Error("CoursePython: runtime-index.js did not register an index");
        this._index = index;
        const out = this.isFile ? await this._loadWrappers(index) : await this._fetchAll(index);
        this._assets = out;
        return out;
      })();
      this._assetsPromise.catch(() => { this._assetsPromise = null; });
    }
    return this._assetsPromise;
  }

  async _fetchAll(index) {
    const total = index.assets.reduce((s, a) => s + a.size, 0);
    let loaded = 0;
    this._progress("download", 0, total);
    const out = {};
    await Promise.all(index.assets.map(async (a) => {
      const resp = await fetch(this.baseURL + a.name);
      if (!resp.ok) throw new Error(`无法加载 ${a.name}: HTTP ${resp.status}`);
      const buf = new Uint8Array(a.size);
      let off = 0;
      const reader = resp.body.getReader();
      let chunks = null;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (chunks || off + value.length > buf.length) { // size differs from index: fall back to concat
          chunks = chunks || [buf.subarray(0, off)];
          chunks.push(value);
        } else buf.set(value, off);
        off += value.length;
        loaded += value.length;
        this._progress("download", Math.min(loaded, total), total);
      }
      let bytes = buf;
      if (chunks) { bytes = new Uint8Array(off); let o = 0; for (const c of chunks) { bytes.set(c, o); o += c.length; } }
      else if (off !== a.size) bytes = buf.slice(0, off);
      out[a.name] = { buffer: bytes.buffer };
    }));
    return out;
  }

  async _loadWrappers(index) {
    const total = index.assets.reduce((s, a) => s + a.wrapperSize, 0);
    let loaded = 0;
    this._progress("download", 0, total);
    const store = (self.__pyAssets = self.__pyAssets || {});
    const out = {};
    await Promise.all(index.assets.map(async (a) => {
      if (store[a.name] === undefined) await loadScript(this.baseURL + a.wrapper);
      const data = store[a.name];
      if (typeof data !== "string") throw new Error(`CoursePython: ${a.wrapper} did not register ${a.name}`);
      delete store[a.name];
      out[a.name] = { kind: a.kind, data };
      loaded += a.wrapperSize;
      this._progress("download", loaded, total);
    }));
    return out;
  }

  // ---------------------------------------------------------------- worker lifecycle
  // A "slot" is one worker + its readiness. `_slot` serves runs; `_spare` is a standby worker booted
  // (lazily, only once a run has lasted SPARE_AFTER_MS) so that stop() can swap it in at once.
  _spawn(restart) {
    const index = this._index;
    const worker = new Worker(PythonRuntime._workerURL(), { name: "course-python" });
    const slot = { worker, isReady: false, warnings: [], interrupt: null };
    slot.ready = new Promise((res, rej) => { slot.resolve = res; slot.reject = rej; });
    slot.ready.then(() => { slot.isReady = true; }, () => {});
    if (this._sab) slot.interrupt = new Int32Array(new SharedArrayBuffer(4));
    worker.onmessage = (ev) => this._onMessage(slot, ev.data);
    worker.onerror = (ev) => {
      if (ev.preventDefault) ev.preventDefault();
      const err = new Error(`CoursePython worker error: ${ev.message || "unknown"}`);
      slot.reject(err);
      if (slot === this._slot) this._failActive({ type: "InternalError", message: err.message, traceback: "" });
    };
    // Copy (not transfer): this thread keeps the bytes for restarts after stop().
    worker.postMessage({
      type: "init",
      indexURL: this.baseURL,
      assets: this._assets,
      lockFile: index.lockFile,
      packages: index.packages,
      // After stop() the namespace is gone anyway: skip the warm-up imports so Python is back sooner.
      imports: restart ? [] : index.imports,
      interruptBuffer: slot.interrupt ? slot.interrupt.buffer : null,
    });
    return slot;
  }

  _startWorker(restart = false) {
    this._setState("loading");
    const token = {};
    this._workerToken = token;
    const ready = (async () => {
      await this._fetchAssets();
      if (this._workerToken !== token) return;
      let slot = restart && this._spare;
      this._spare = null;
      if (!slot) {
        slot = this._spawn(restart);
        this._progress(restart ? "restart" : "boot");
      }
      this._slot = slot;
      await slot.ready;
    })();
    this._loadPromise = ready;
    ready.then(() => {
      if (this._workerToken !== token) return;
      this.warnings = this._slot.warnings;
      this._progress("ready", 1, 1);
      this._setState(this._active || this._queue.length ? "running" : "ready");
      this._pump();
    }, (e) => {
      if (this._workerToken !== token) return;
      console.error("CoursePython: load failed", e);
      this._loadPromise = null;
      if (this._slot) { this._slot.worker.terminate(); this._slot = null; }
      this._setState("idle");
      const queued = this._queue.splice(0);
      for (const r of queued) r.reject(e);
    });
    return ready;
  }

  _ensureSpare() {
    if (this._spare || !this._assets || !this._slot) return;
    const spare = this._spawn(true);
    this._spare = spare;
    spare.ready.catch(() => {
      if (this._spare === spare) this._spare = null;
      spare.worker.terminate();
    });
  }

  static _workerURL() {
    if (!PythonRuntime._url) {
      PythonRuntime._url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "text/javascript" }));
    }
    return PythonRuntime._url;
  }

  _onMessage(slot, msg) {
    switch (msg.type) {
      case "ready":
        slot.warnings = msg.warnings || [];
        slot.resolve();
        return;
      case "init-error": {
        const e = new Error(`CoursePython: Python failed to start: ${msg.message}`);
        e.stack = msg.stack || e.stack;
        slot.reject(e);
        return;
      }
    }
    if (slot !== this._slot) return;
    switch (msg.type) {
      case "progress":
        if (msg.phase !== "boot" || this._lastProgress?.phase !== "restart") this._progress(msg.phase);
        break;
      case "stream": {
        const run = this._active;
        if (!run || run.id !== msg.id) break;
        const fn = msg.stream === "stderr" ? run.opts.onStderr : run.opts.onStdout;
        if (fn) { try { fn(msg.text); } catch (e) { console.error(e); } }
        break;
      }
      case "result": {
        const run = this._active;
        if (!run || run.id !== msg.id) break;
        this._finish(run);
        const r = msg.result || {};
        const result = { ok: !!r.ok, repr: r.repr ?? null, error: r.error ?? null, truncated: !!r.truncated };
        if (run.stopping && result.error && result.error.type === "KeyboardInterrupt") run.reject(new StoppedError());
        else run.resolve(result);
        this._pump();
        break;
      }
      case "reset-done": {
        const w = this._resetWaiters.get(msg.id);
        if (w) { this._resetWaiters.delete(msg.id); w(); }
        break;
      }
    }
  }

  _finish(run) {
    if (this._active === run) this._active = null;
    clearTimeout(run.spareTimer);
  }

  _pump() {
    if (this._active || this._state === "loading" || this._state === "idle") return;
    const next = this._queue.shift();
    if (!next) { this._setState("ready"); return; }
    this._active = next;
    this._setState("running");
    next.spareTimer = setTimeout(() => { if (this._active === next) this._ensureSpare(); }, SPARE_AFTER_MS);
    this._slot.worker.postMessage({ type: "run", id: next.id, code: next.code, filename: next.filename });
  }

  _failActive(error) {
    const run = this._active;
    if (run) this._finish(run);
    if (run) run.resolve({ ok: false, repr: null, error, truncated: false });
  }

  // ---------------------------------------------------------------- public API
  run(code, opts = {}) {
    const id = this._nextId++;
    const cell = opts.cell != null ? String(opts.cell) : String(++this._cellCounter);
    const filename = `<cell-${cell}>`;
    return new Promise((resolve, reject) => {
      this._queue.push({ id, code: String(code), filename, opts, resolve, reject });
      if (!this._loadPromise) this.load().catch(() => {});
      else this._pump();
    });
  }

  async stop() {
    const run = this._active;
    const queued = this._queue.splice(0);
    for (const r of queued) r.reject(new StoppedError());
    if (!run) return;
    const interrupt = this._slot && this._slot.interrupt;
    if (interrupt) {
      run.stopping = true;
      interrupt[0] = 2; // SIGINT → KeyboardInterrupt, namespace kept
      const t0 = performance.now();
      while (this._active === run && performance.now() - t0 < STOP_GRACE_MS) await new Promise((r) => setTimeout(r, 20));
      if (this._active !== run) return;
    }
    this._finish(run);
    run.reject(new StoppedError());
    this._restart();
  }

  _restart() {
    if (this._slot) { this._slot.worker.terminate(); this._slot = null; }
    for (const w of this._resetWaiters.values()) w();
    this._resetWaiters.clear();
    this._cellCounter = 0;
    this._startWorker(true).catch(() => {});
  }

  async reset() {
    const queued = this._queue.splice(0);
    for (const r of queued) r.reject(new StoppedError("命名空间已重置"));
    this._cellCounter = 0;
    if (this._active) {              // a run is executing: a fresh worker is the only way
      const run = this._active;
      this._finish(run);
      run.reject(new StoppedError());
      this._restart();
      return;
    }
    if (!this._slot || this._state !== "ready") return; // nothing (or a fresh worker) loaded
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
  if (typeof window !== "undefined" && !window.CoursePython) {
    window.CoursePython = { getRuntime, PythonRuntime, StoppedError, version: "1" };
  }
}
