// Main-thread API of the self-hosted Python runtime: Course.python (theme/js/shared/course.js).
//
//   const rt = Course.python.getRuntime();        // one per page, shared by all code cells
//   await rt.load({ onProgress(p) { p.phase, p.loaded, p.total, p.label }, codes });  // onProgress: until that load
//     // ends; codes: what will run next (the optional packs they import load with the boot, over http)
//   rt.prefetch();                               // load when the page is idle
//   const r = await rt.run(code, { onStdout, onStderr, onDisplay(kind, data, meta), onPackages({names, loaded, total}), cell });
//     // r = { ok, repr, error: {type, message, traceback} | null, truncated }
//     // rejects with err.type === "Stopped" when stop() interrupts it
//   await rt.stop();   await rt.reset();   rt.state;   rt.addEventListener("statechange", …)
//
// Pyodide never runs on the main thread: it lives in a Worker started from a blob: URL (works on http
// and file://).  Assets are located next to python-runtime.js (document.currentScript), so any sub-path
// works.  Every asset ships once, as ≤ 512 KiB `<name>.<i>.js` wrapper scripts (builder/runtime/wrappers.py,
// transport.js) that both transports read.  On http the workers fetch them themselves (HTTP cache) and
// verify every payload's sha256 of runtime-index.js before inflating it.  On file:// this thread injects
// them (one short task each: ASCII scripts are parsed off this thread), decodes each literal as it arrives
// and posts every asset's payload to its worker as soon as it is complete, so Python boots while the
// wheels still load; the payloads stay here for restarts after stop().  An asset marked `lazy` in the
// index is loaded only when a worker asks for it ({type: "need"}), the same way on both transports: the
// optional packs (matplotlib & co., index `optional.packages`) are such assets, asked for when a cell imports
// them or, once Python is idle, for the page's own cells (`preloadFor`).
// Once a run has finished, a standby worker boots in the background so that 停止 swaps it in at once.

import { part } from "../shared/course.js";
import { loadScript } from "../shared/load-script.js";
import { optionalPacksFor } from "./optional-imports.js";
import { assetRecord, literalInto } from "./transport.js";

const MB = (n) => (n / 1e6).toFixed(1);
const LABELS = {
  download: (p) => `正在加载 Python 运行环境… ${MB(p.loaded)} / ${MB(p.total)} MB`,
  boot: () => "正在启动 Python…",
  packages: () => "正在安装 NumPy…",
  import: () => "正在导入 numpy…",
  ready: () => "Python 已就绪",
  restart: () => "正在重启 Python…",
};
const STOP_GRACE_MS = 400; // interrupt-buffer path only (cross-origin isolated pages)
const SPARE_AFTER_MS = 300; // a run this long may get stopped: boot the standby worker now if not yet
const SPARE_IDLE_MS = 1500; // after the first run: boot the standby when the page has been quiet this long
const WARM_AFTER_IDLE_MS = 250; // idle this long after loading or a run: import attention_core & co.
const WRAPPERS_IN_FLIGHT = 4; // file:// wrapper scripts loading at once

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
    this._indexPromise = null;
    this._fileAssets = null;    // file://: name -> Promise<Uint8Array> (payloads read from the wrappers, kept for restarts)
    this._download = null;      // {loaded, total} of the current load, null once complete
    this._phase = null;         // latest worker phase, shown once the download is complete
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
    this.timings = [];          // [label, ms since this page's timeOrigin]: where loading time goes
    this._sab = typeof self !== "undefined" && self.crossOriginIsolated && typeof SharedArrayBuffer === "function";
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
    for (const fn of this._progressListeners) { try { fn(p); } catch (e) { console.error(e); } }
    this.dispatchEvent(new CustomEvent("progress", { detail: p }));
  }

  load(options = {}) {
    // `codes`: what the caller will run once Python is up (its optional packs come along with the boot)
    if (options.codes) this._bootCodes = [...(this._bootCodes || []), ...options.codes].map(String);
    if (options.onProgress) {
      this._progressListeners.add(options.onProgress);
      if (this._lastProgress) { try { options.onProgress(this._lastProgress); } catch (e) { console.error(e); } }
    }
    if (!this._loadPromise) { this._mark("load"); this._loads = (this._loads || 0) + 1; this._startWorker(); }
    return this._loadPromise;
  }

  /** Start the two worker threads now (no download, no Python: they wait for "init"), and with `index` read
   *  the small runtime index, so that a first run does not wait for their start-up (~50–100 ms). */
  prepare({ index = true } = {}) {
    if (index && !this._loadPromise) this._loadIndex().catch(() => {}); // also when the workers were prepared before
    if (this._loadPromise || this._prepared) return;
    try {
      const prepared = {
        worker: new Worker(PythonRuntime._workerURL(), { name: "course-python" }),
        unpacker: new Worker(PythonRuntime._unpackerURL(), { name: "course-python-unpacker" }),
      };
      // One that fails to start is not used: the run starts fresh ones, whose errors it reports.
      prepared.worker.onerror = prepared.unpacker.onerror = (ev) => { if (ev.preventDefault) ev.preventDefault(); prepared.failed = true; };
      this._prepared = prepared;
    } catch (e) {
      this._prepared = null; // a run creates them as before
    }
  }

  /** The page's cells' code: once idle, the worker loads the optional packs (matplotlib) they import. */
  preloadFor(codes) {
    this._preload = [...codes].map(String);
  }

  prefetch() {
    if (this._loadPromise) return;
    // Only if nothing has loaded meanwhile: a run's load that failed before the page was idle is not retried
    // behind the reader's back (the next 运行 starts a fresh one).
    const loads = this._loads || 0;
    const go = () => {
      if (!this._loadPromise && (this._loads || 0) === loads) this.load().catch((e) => console.warn("CoursePython prefetch:", e));
    };
    if (typeof requestIdleCallback === "function") requestIdleCallback(go, { timeout: 5000 });
    else setTimeout(go, 1500);
  }

  // ---------------------------------------------------------------- assets
  _loadIndex() {
    if (!this._indexPromise) {
      this._indexPromise = (async () => {
        if (!part("python").index) await loadScript(this.baseURL + "runtime-index.js");
        const index = part("python").index;
        if (!index) throw new Error("CoursePython: runtime-index.js did not register an index");
        this._mark("index-loaded");
        this._index = index;
        return index;
      })();
      this._indexPromise.catch(() => { this._indexPromise = null; });
    }
    return this._indexPromise;
  }

  _downloadProgress(loaded, total) {
    if (!this._download) return;
    this._download = { loaded, total };
    this._progress("download", loaded, total);
    if (loaded >= total) {
      this._download = null;
      this._mark("downloaded");
      if (this._phase) this._progress(this._phase);
    }
  }

  /** file://: the payload of every eagerly loaded asset (in index order: core files first), each read from its
   *  wrapper chunks as they run; lazy assets (index `lazy`) wait until a worker asks (`_fileAsset`). */
  _loadWrappers(index) {
    if (this._fileAssets) return this._fileAssets;
    this._fileAssets = new Map();
    this._wrapperTotal = index.assets.reduce((s, a) => s + (a.lazy ? 0 : a.wrapperSize), 0);
    this._wrapperLoaded = 0;
    for (const a of index.assets) if (!a.lazy) this._fileAsset(a);
    return this._fileAssets;
  }

  /** file://: one asset's payload from its wrapper scripts (started once, kept for restarts). */
  _fileAsset(a) {
    if (!this._fileAssets) this._fileAssets = new Map();
    if (!this._wrapperQueue) this._wrapperQueue = { inFlight: 0, queue: [] };
    const assets = this._fileAssets;
    if (assets.has(a.name)) return assets.get(a.name);
    const python = part("python");
    const store = (python.assets = python.assets || {});
    const index = this._index;
    // A few scripts in flight at a time (in index order): when dozens of file:// scripts finish loading
    // together, Chromium runs several of them back to back in one long task.
    const q = this._wrapperQueue;
    const next = () => { if (q.inFlight < WRAPPERS_IN_FLIGHT && q.queue.length) { q.inFlight++; q.queue.shift()(); } };
    const limit = (start) => new Promise((resolve, reject) => {
      q.queue.push(() => start().then(resolve, reject).finally(() => { q.inFlight--; next(); }));
      next();
    });
    const bytes = new Uint8Array(a.size);
    let decoded = 0;
    const per = a.wrapperSize / a.wrappers.length;
    const parts = a.wrappers.map((file, i) => limit(() => loadScript(this.baseURL + file, false)).then(() => {
      const key = `${a.name}/${i}`;
      const text = store[key];
      delete store[key];
      if (typeof text !== "string") throw new Error(`CoursePython: ${file} did not register ${key}`);
      decoded += literalInto(bytes, i * index.wrapperChunkBytes, text);
      if (!a.lazy) {
        this._wrapperLoaded += per;
        this._downloadProgress(Math.round(this._wrapperLoaded), this._wrapperTotal);
      }
    }));
    const done = Promise.all(parts).then(() => {
      if (decoded !== a.size) throw new Error(`CoursePython: ${a.name}: ${decoded} bytes, expected ${a.size}`);
      return bytes;
    });
    done.catch(() => { if (assets.get(a.name) === done) assets.delete(a.name); }); // read it again next time
    assets.set(a.name, done);
    return done;
  }

  /** file://: post one asset's payload to a worker (a copy: this thread keeps the bytes for the next one). */
  _postFileAsset(slot, to, a) {
    this._fileAsset(a).then((b) => { if (!slot.dead) to.postMessage({ type: "asset", name: a.name, buffer: b.buffer }); },
      (e) => {
        if (a.lazy) { if (!slot.dead) to.postMessage({ type: "asset", name: a.name, error: String(e && e.message || e) }); }
        else slot.reject(e);
      });
  }

  // ---------------------------------------------------------------- worker lifecycle
  // A "slot" is one worker + its readiness. `_slot` serves runs; `_spare` is a standby worker booted in
  // the background (after the first run, or once a run has lasted SPARE_AFTER_MS) so that stop() can
  // swap it in at once.
  _spawn(label) {
    const index = this._index;
    let prepared = this._prepared;
    this._prepared = null;
    if (prepared && prepared.failed) {
      prepared.worker.terminate();
      prepared.unpacker.terminate();
      prepared = null;
    }
    const worker = prepared ? prepared.worker : new Worker(PythonRuntime._workerURL(), { name: "course-python" });
    const slot = { worker, isReady: false, warnings: [], interrupt: null, label };
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
    // The unpacker (unpacker.js) inflates the snapshot and the wheel packs for this worker, on another thread:
    // the boot bundle that holds them (an asset with `parts`, builder/runtime/prepare.py), or each on its own.
    const bundled = new Set(index.assets.flatMap((a) => (a.parts || []).map((p) => p.name)));
    // Over http it also fetches and inflates, after the boot's own assets, the optional packs (matplotlib & co.)
    // that this page's cells or the waiting runs import: a first figure then finds them ready when Python is,
    // instead of fetching them only then (and a returning reader's come from its inflated-bytes cache). Over
    // file:// this thread reads every wrapper script itself, so lazy packs still wait until a run asks.
    const early = this.isFile ? [] : optionalPacksFor(index, [...(this._preload || []), ...(this._bootCodes || []),
      ...this._queue.map((r) => r.code)]);
    // The main wasm goes first (compiled on V8's threads while the rest inflates), when there is a boot bundle.
    const unpackWasm = index.assets.some((a) => a.parts) && index.assets.some((a) => a.name === "pyodide.asm.wasm");
    const jobs = [
      ...(unpackWasm ? [{ name: "pyodide.asm.wasm", kind: "file" }] : []),
      ...index.assets.filter((a) => a.parts).map((a) => ({ name: a.name, kind: "bundle" })),
      ...(index.snapshot ? [{ name: index.snapshot.name, kind: "snapshot" }] : []),
      ...(index.packs || []).map((p) => ({ name: p.name, kind: "pack" })),
      ...early.map((name) => ({ name, kind: "pack", extra: true })), // after the boot's downloads, not in its bar
    ].filter((j) => !bundled.has(j.name))
      .map((j) => ({ ...assetRecord(index.assets.find((a) => a.name === j.name)), ...j }));
    let channel = null;
    if (jobs.length) {
      channel = new MessageChannel();
      slot.unpacker = prepared ? prepared.unpacker : new Worker(PythonRuntime._unpackerURL(), { name: "course-python-unpacker" });
      slot.unpacker.onmessage = ({ data }) => {
        if (data.type === "bytes") this._countBytes(slot, "unpacker", data.n);
      };
      // Its failures reach the Python worker through the port; a script error would leave it waiting.
      slot.unpacker.onerror = (ev) => {
        if (ev.preventDefault) ev.preventDefault();
        slot.reject(new Error(`CoursePython unpacker error: ${ev.message || "unknown"}`));
      };
      slot.unpacker.postMessage({ type: "init", port: channel.port1, mode: this.isFile ? "file" : "http",
        indexURL: this.baseURL, chunkBytes: index.wrapperChunkBytes, jobs,
        // what it stored for this site's other pages stays (the optional packs a page without plots never asks for)
        keep: index.assets.filter((a) => a.parts || a.lazy).map((a) => ({ name: a.name, sha256: a.sha256 })) }, [channel.port1]);
    }
    else if (prepared) prepared.unpacker.terminate();
    slot.loaded = { worker: 0, unpacker: 0 };
    worker.postMessage({
      type: "init",
      mode: this.isFile ? "file" : "http",
      indexURL: this.baseURL,
      assets: index.assets.map(assetRecord),
      chunkBytes: index.wrapperChunkBytes,
      lockFile: index.lockFile,
      packages: index.packages,
      imports: index.imports,
      optional: index.optional || null,
      packs: index.packs || [],
      snapshot: index.snapshot || null,
      early,
      unpackWasm,
      env: index.env || null,
      interruptBuffer: slot.interrupt ? slot.interrupt.buffer : null,
      unpackerPort: channel ? channel.port2 : null,
    }, channel ? [channel.port2] : []);
    if (this.isFile) {
      const unpacks = new Set(jobs.map((j) => j.name));
      this._loadWrappers(index);
      for (const a of index.assets) {
        if (!a.lazy) this._postFileAsset(slot, unpacks.has(a.name) ? slot.unpacker : worker, a);
      }
    }
    return slot;
  }

  _kill(slot) {
    if (!slot) return;
    slot.dead = true;
    slot.worker.terminate();
    if (slot.unpacker) slot.unpacker.terminate();
  }

  /** http download progress of one slot: its Python worker and its unpacker each count what they read. */
  _countBytes(slot, who, n, absolute = false) {
    slot.loaded[who] = absolute ? n : slot.loaded[who] + n;
    if (slot !== this._slot || !this._download) return;
    const total = this._download.total;
    this._downloadProgress(Math.min(total, slot.loaded.worker + slot.loaded.unpacker), total);
  }

  _startWorker(restart = false) {
    this._setState("loading");
    const token = {};
    this._workerToken = token;
    const ready = (async () => {
      await this._loadIndex();
      if (this._workerToken !== token) return;
      let slot = restart && this._spare;
      this._spare = null;
      if (!slot) {
        const total = this._index.assets.reduce((s, a) => s + (a.lazy ? 0 : a.wrapperSize), 0);
        this._phase = restart ? "restart" : "boot";
        if (!restart && !(this.isFile && this._fileAssets)) {
          this._download = { loaded: 0, total };
          this._progress("download", 0, total);
        } else this._progress(this._phase);
        slot = this._spawn(restart ? "restart" : "first");
      }
      this._slot = slot;
      await slot.ready;
    })();
    this._loadPromise = ready;
    ready.then(() => {
      if (this._workerToken !== token) return;
      this.warnings = this._slot.warnings;
      this._mark("ready");
      this._download = null;
      this._progress("ready", 1, 1);
      this._progressListeners.clear(); // onProgress belongs to one load(): a later restart is not theirs
      this._setState(this._active || this._queue.length ? "running" : "ready");
      this._pump();
    }, (e) => {
      if (this._workerToken !== token) return;
      console.error("CoursePython: load failed", e);
      this._loadPromise = null;
      this._download = null;
      if (this.isFile) this._fileAssets = null; // a wrapper failed to load: read them again next time
      if (this._slot) { this._kill(this._slot); this._slot = null; }
      this._progressListeners.clear();
      this._setState("idle");
      const queued = this._queue.splice(0);
      for (const r of queued) r.reject(e);
    });
    return ready;
  }

  _ensureSpare() {
    clearTimeout(this._spareIdle);
    if (this._spare || !this._index || !this._slot || !this._slot.isReady) return;
    const spare = this._spawn("standby");
    this._spare = spare;
    spare.ready.catch(() => {
      if (this._spare === spare) this._spare = null;
      this._kill(spare);
    });
  }

  /** Idle for a moment (a run the reader asked for is usually queued right after "ready"): the worker may
   *  now import the packages it left for later (worker.js, warmImports). */
  _scheduleWarm() {
    const slot = this._slot;
    if (!slot || slot.warmed) return;
    clearTimeout(this._warmTimer);
    this._warmTimer = setTimeout(() => {
      if (this._slot !== slot || slot.warmed || this._active || this._queue.length) return;
      slot.warmed = true;
      slot.worker.postMessage({ type: "warm", preload: this._preload || [] });
    }, WARM_AFTER_IDLE_MS);
  }

  /** After a run finished: boot the standby once the page has been quiet for a moment. */
  _scheduleSpare() {
    if (this._spare) return;
    clearTimeout(this._spareIdle);
    this._spareIdle = setTimeout(() => {
      if (this._active || this._queue.length) return; // a run in progress arms its own SPARE_AFTER_MS timer
      if (typeof requestIdleCallback === "function") requestIdleCallback(() => this._ensureSpare(), { timeout: 2000 });
      else this._ensureSpare();
    }, SPARE_IDLE_MS);
  }

  static _workerURL() {
    if (!PythonRuntime._url) {
      PythonRuntime._url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "text/javascript" }));
    }
    return PythonRuntime._url;
  }

  static _unpackerURL() {
    if (!PythonRuntime._unpackerUrl) {
      PythonRuntime._unpackerUrl = URL.createObjectURL(new Blob([UNPACKER_SOURCE], { type: "text/javascript" }));
    }
    return PythonRuntime._unpackerUrl;
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
    if (msg.type === "need") { // a lazy asset (file://; over http the worker fetches it itself)
      const a = this._index.assets.find((x) => x.name === msg.name);
      if (a && this.isFile) this._postFileAsset(slot, slot.worker, a);
      else if (!slot.dead) slot.worker.postMessage({ type: "asset", name: msg.name, error: `CoursePython: no asset ${msg.name}` });
      return;
    }
    if (msg.type === "mark") {
      this._mark(slot.label === "first" ? msg.label : `${slot.label}:${msg.label}`, msg.t - performance.timeOrigin);
      return;
    }
    if (slot !== this._slot) return;
    switch (msg.type) {
      case "download":
        this._countBytes(slot, "worker", msg.loaded, true);
        break;
      case "progress":
        if (msg.phase === "boot" && this._phase === "restart") break;
        this._phase = msg.phase;
        if (!this._download) this._progress(msg.phase);
        break;
      case "display": {
        const run = this._active;
        if (!run || run.id !== msg.id || !run.opts.onDisplay) break;
        try { run.opts.onDisplay(msg.kind, msg.data, msg.meta || {}); } catch (e) { console.error(e); }
        break;
      }
      case "packages": {
        const run = this._active;
        if (!run || run.id !== msg.id || !run.opts.onPackages) break;
        try { run.opts.onPackages({ names: msg.names, loaded: msg.loaded, total: msg.total }); } catch (e) { console.error(e); }
        break;
      }
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
        if (run.setsUp) slot.setUp = true;
        this._scheduleSpare();
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
    if (!next) {
      this._setState("ready");
      this._scheduleWarm();
      return;
    }
    this._active = next;
    this._setState("running");
    // A run that sets up an optional package (installs matplotlib & co., imports pyplot, draws its first figure:
    // ~1–2 s of CPU) would share the 2 cores of a small machine with the standby's boot: the standby waits until
    // it is over. Stopping it meanwhile starts a fresh worker instead of swapping in the standby.
    next.setsUp = !this._slot.setUp && optionalPacksFor(this._index, [next.code]).length > 0;
    if (!next.setsUp) next.spareTimer = setTimeout(() => { if (this._active === next) this._ensureSpare(); }, SPARE_AFTER_MS);
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
    if (this._slot) { this._kill(this._slot); this._slot = null; }
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
let UNPACKER_SOURCE = "";
export function install(workerSource, unpackerSource) {
  WORKER_SOURCE = workerSource;
  UNPACKER_SOURCE = unpackerSource;
  if (typeof window !== "undefined" && !part("python").getRuntime) {
    Object.assign(part("python"), { getRuntime, PythonRuntime, StoppedError, version: "1" });
  }
}
