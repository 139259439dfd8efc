// The Python runtime's main-thread API (assets/python/python-runtime.js, ~44 KiB with both workers' code) is
// not part of a page's first view (issue 19): cells.js loads it at the reader's first sign of life (scroll,
// touch, pointer, key), when code nears the view, or on a run — whichever comes first. Until then the cells
// talk to this stand-in, which has the same surface (state, statechange/progress events, prepare, prefetch,
// preloadFor, load, run, reset, stop) and hands each call on once the script is there.
import { course } from "../shared/course.js";
import { loadScript } from "../shared/load-script.js";

const FORWARDED = ["statechange", "progress"];

export class LazyRuntime extends EventTarget {
  constructor(url) {
    super();
    this.url = url;
    this.real = null;      // the PythonRuntime, once python-runtime.js has run
    this.loading = null;   // Promise<PythonRuntime>
    this._preload = null;  // preloadFor's codes, handed on when the runtime arrives
  }

  get state() { return this.real ? this.real.state : "idle"; }

  /** Load python-runtime.js (once; again after a failure) and resolve to the page's runtime. */
  ensure() {
    if (this.real) return Promise.resolve(this.real);
    if (!this.loading) {
      const registered = () => course().python?.getRuntime;
      this.loading = (registered() ? Promise.resolve() : loadScript(this.url)).then(() => {
        if (!registered()) throw new Error("Python 运行环境没有注册");
        return this._adopt(registered()());
      });
      this.loading.catch(() => { this.loading = null; }); // the next call tries again
    }
    return this.loading;
  }

  _adopt(rt) {
    this.real = rt;
    for (const type of FORWARDED) {
      rt.addEventListener(type, (e) => this.dispatchEvent(new CustomEvent(type, { detail: e.detail })));
    }
    if (this._preload && rt.preloadFor) rt.preloadFor(this._preload);
    if (rt.state !== "idle") this.dispatchEvent(new CustomEvent("statechange", { detail: { state: rt.state } }));
    return rt;
  }

  // Background work: a script that fails to load is reported by the next run, not here.
  prepare(options) { this.ensure().then((rt) => rt.prepare(options), () => {}); }
  prefetch() { this.ensure().then((rt) => rt.prefetch(), () => {}); }
  preloadFor(codes) {
    this._preload = [...codes];
    if (this.real && this.real.preloadFor) this.real.preloadFor(this._preload);
  }

  async load(options) { return (await this.ensure()).load(options); }
  async run(code, options) { return (await this.ensure()).run(code, options); }
  // Nothing to reset or stop before the runtime exists.
  async reset() { if (this.real) await this.real.reset(); }
  async stop() { return this.real ? this.real.stop() : { kept: true }; }
}
