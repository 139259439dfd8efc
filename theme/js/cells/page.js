// Controller for the code cells of one page: one shared Python namespace (one runtime), run/stop/reset
// per cell, "全部运行", loading progress, persistence of edits.
// The page starts with the build-time highlighted <pre> of each cell (focusable; Ctrl/⌘+Enter runs it).
// CodeMirror (assets/editor.js) is loaded only when needed — focus or click on the code, 运行, or an idle
// moment once the cells are near the viewport — and then replaces each <pre> with an editor of the same
// height, one cell per task so no long task blocks the page.
import { course, option } from "../shared/course.js";
import { OutputView } from "./output.js";
import { loadEdit, saveEdit, clearEdit } from "./storage.js";
import { watchOtherTabs } from "./tabs.js";
import { loadEditor, whenIdleAfterLoad } from "./lazy-editor.js";
import { LazyRuntime } from "./lazy-runtime.js";
import { onFirstInput } from "../shared/first-input.js";
import { initExercises } from "./exercise.js";

const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;
const ERROR_LINE_RE = /File "<cell-([^>]*)>", line (\d+)/g;

/** The line (1-based) of this cell's code that raised: its innermost frame in the traceback. */
export function errorLine(traceback, cellId) {
  let line = null;
  for (const m of String(traceback || "").matchAll(ERROR_LINE_RE)) if (m[1] === cellId) line = Number(m[2]);
  return line;
}

class Cell {
  constructor(page, section, index) {
    this.page = page;
    this.section = section;
    this.index = index;
    this.id = section.dataset.cellId;
    this.hidden = section.hasAttribute("data-hide");
    this.readOnly = section.hasAttribute("data-readonly");
    this.expectError = section.hasAttribute("data-expect-error");
    this.sourceHash = section.dataset.sourceHash;
    this.pre = section.querySelector(".cell-source");
    this.originalHTML = this.pre.innerHTML;
    this.original = this.pre.textContent.replace(/\n$/, "");
    this.code = this.original;
    this.view = null; // the CodeMirror view, once upgraded
    this.errorLineNumber = null;
    this.ranGeneration = -1;
    this.running = false;
    this.exercise = null; // the ExerciseView (cells/exercise.js) when this is an exercise's code
    this.buttons = {
      run: section.querySelector('[data-action="run"]'),
      stop: section.querySelector('[data-action="stop"]'),
      reset: section.querySelector('[data-action="reset"]'),
    };
    this.modified = section.querySelector(".cell-modified");
    this.notice = section.querySelector(".cell-notice");
    this.output = new OutputView(section.querySelector(".cell-output"), { mountWidget: (box, spec) => page.mountWidget(box, spec) });
    if (page.storedEdits) this.applyStoredEdit();
    this.wireStaticCode();
    section.dataset.editor = "static";
    this.buttons.run.addEventListener("click", () => this.run());
    this.buttons.stop.addEventListener("click", () => page.stop());
    this.buttons.reset.addEventListener("click", () => this.resetCode());
    for (const b of Object.values(this.buttons)) b.disabled = false;
    if (this.readOnly) this.buttons.reset.hidden = true;
    this.updateModified();
  }

  applyStoredEdit() {
    const rec = loadEdit(this.page.slug, this.id);
    if (!rec || rec.code === this.original) return;
    if (rec.base === this.sourceHash) {
      this.code = rec.code;
      this.pre.firstElementChild.textContent = rec.code; // plain until the editor highlights it
      this.page.editorSoon = true;
      return;
    }
    // The author changed this cell since the reader edited it: never apply the old edit silently.
    this.showNotice("作者更新了这个单元的代码，你之前的修改没有自动套用。", [
      ["恢复我的修改", () => { this.setCode(rec.code); this.hideNotice(); }],
      ["丢弃我的修改", () => { clearEdit(this.page.slug, this.id); this.hideNotice(); }],
    ], "stale");
  }

  /** The static <pre>: focusable, runs on Ctrl/⌘+Enter, and asks for the editor on focus or click. */
  wireStaticCode() {
    const pre = this.pre;
    pre.tabIndex = 0;
    pre.setAttribute("aria-keyshortcuts", "Control+Enter Meta+Enter Shift+Enter");
    pre.addEventListener("keydown", (e) => {
      if (e.key !== "Enter" || e.altKey) return;
      if (e.ctrlKey || e.metaKey) { e.preventDefault(); this.run(); }
      else if (e.shiftKey) { e.preventDefault(); this.run(); this.page.focusAfter(this); }
    });
    pre.addEventListener("pointerdown", (e) => {
      const box = pre.getBoundingClientRect();
      this.pointer = { x: e.clientX - box.left, y: e.clientY - box.top };
    });
    pre.addEventListener("focus", () => {
      this.focusPoint = this.pointer || null; // null: focused from the keyboard
      this.pointer = null;
      this.page.warmUp();
      this.page.upgradeSoon(this);
    });
  }

  /** Replace the <pre> by a CodeMirror editor (same font, padding, line height → same height). */
  upgrade(api) {
    if (this.view) return;
    const hadFocus = document.activeElement === this.pre;
    const pointer = this.focusPoint;
    const page = this.page;
    this.view = api.createEditor({
      pre: this.pre,
      code: this.code,
      readOnly: this.readOnly,
      label: `Python 代码（单元 ${this.id}）`,
      completionSource: api.courseCompletionSource(() => page.cells.map((c) => c.code), page.completionsURL),
      handlers: {
        run: () => this.run(),
        runAndNext: () => { this.run(); page.focusAfter(this); },
        change: (code) => this.onEdit(code),
      },
    });
    if (this.errorLineNumber) api.setErrorLine(this.view, this.errorLineNumber);
    this.view.contentDOM.addEventListener("focus", () => page.warmUp(), { once: true });
    this.section.dataset.editor = "ready";
    if (hadFocus) {
      // Keep the reader where they were: the caret goes where they clicked (or to the start).
      const box = this.view.dom.getBoundingClientRect();
      const pos = pointer ? this.view.posAtCoords({ x: box.left + pointer.x, y: box.top + pointer.y }) : null;
      this.view.focus();
      if (pos != null) this.view.dispatch({ selection: { anchor: pos } });
    }
  }

  /** Set the code like an edit would (the editor when there is one, else the static <pre>). */
  setCode(code) {
    if (this.view) { this.page.editor.setCode(this.view, code); return; }
    if (code === this.original) this.pre.innerHTML = this.originalHTML; // our own build-time markup
    else this.pre.firstElementChild.textContent = code;
    this.onEdit(code);
  }

  focus() {
    (this.view || this.pre).focus();
  }

  onEdit(code) {
    this.code = code;
    if (code === this.original) clearEdit(this.page.slug, this.id);
    else saveEdit(this.page.slug, this.id, this.sourceHash, code);
    if (this.notice.dataset.kind === "stale" && code !== this.original) this.hideNotice();
    this.updateModified();
  }

  updateModified() {
    const modified = this.code !== this.original;
    this.modified.hidden = !modified;
    this.section.toggleAttribute("data-modified", modified);
    this.output.markSourceChanged(modified);
  }

  resetCode() {
    this.setCode(this.original);
    clearEdit(this.page.slug, this.id);
    this.clearErrorLine();
    this.output.restoreBuildOutput();
    this.hideNotice();
    this.updateModified();
    this.focus();
  }

  showNotice(text, actions = [], kind = "") {
    const p = document.createElement("span");
    p.textContent = text;
    const nodes = [p];
    for (const [label, fn] of actions) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "cell-btn cell-notice-btn";
      b.textContent = label;
      b.addEventListener("click", fn);
      nodes.push(b);
    }
    this.notice.replaceChildren(...nodes);
    this.notice.dataset.kind = kind;
    this.notice.hidden = false;
  }

  hideNotice() {
    this.notice.hidden = true;
    this.notice.dataset.kind = "";
    this.notice.replaceChildren();
  }

  setRunning(on) {
    this.running = on;
    this.section.toggleAttribute("data-running", on);
    this.buttons.stop.hidden = !on;
    this.buttons.stop.disabled = !on;
    this.buttons.run.disabled = on;
  }

  /** Highlight the line that raised (1-based; null clears), now or as soon as the editor exists. */
  setErrorLine(line) {
    this.errorLineNumber = line;
    if (this.view) this.page.editor.setErrorLine(this.view, line);
  }

  clearErrorLine() {
    this.setErrorLine(null);
  }

  run() {
    return this.page.run(this);
  }

  /** Execute this cell now (the page has loaded Python and run what must come first). */
  async execute() {
    const page = this.page;
    if (this.notice.dataset.kind !== "stale") this.hideNotice();
    this.clearErrorLine();
    this.output.begin();
    this.setRunning(true);
    const generation = page.generation;
    const started = performance.now();
    let result;
    try {
      result = await page.runtime.run(this.code + "\n", {
        cell: this.id,
        onStdout: (text) => this.output.append("stdout", text),
        onStderr: (text) => this.output.append("stderr", text),
        onDisplay: (kind, data, meta) => this.output.display(kind, data, meta),
        onPackages: (p) => this.output.setStatus(`正在加载 ${p.names.join("、")}… ${(p.loaded / 1e6).toFixed(1)} / ${(p.total / 1e6).toFixed(1)} MB`, "loading"),
      });
    } catch (err) {
      this.setRunning(false);
      if (err && err.type === "Stopped") {
        if (err.kept) this.ranGeneration = generation; // it ran up to where it stopped: what it set is there
        this.output.setStatus("已停止", "stopped");
        return { ok: false, stopped: true };
      }
      this.output.error({ type: "Error", message: String(err && err.message || err), traceback: "" });
      this.output.setStatus("出错", "error");
      return { ok: false };
    }
    this.setRunning(false);
    this.ranGeneration = generation;
    const elapsed = performance.now() - started;
    if (result.error) this.output.error(result.error);
    if (result.repr != null) this.output.result(result.repr);
    if (result.truncated) this.output.markTruncated();
    if (result.error) {
      const line = errorLine(result.error.traceback, this.id);
      this.output.setStatus(line ? `出错 · 第 ${line} 行` : "出错", "error");
      this.setErrorLine(line);
      const missing = result.error.type === "NameError" && /name '([^']+)' is not defined/.exec(result.error.message || "");
      const exercise = missing ? page.exerciseDefining(missing[1], this) : null;
      if (exercise) {
        const title = exercise.root.querySelector(".exercise-title")?.textContent.trim() || exercise.id;
        this.showNotice(`“${missing[1]}”由上面的练习定义：${title}。在那里点“检查”并通过后，这个单元用的就是你写的 ${missing[1]}（卡住了可以看提示，最后一条提示和参考答案会给出写法）。`,
          [["去这道练习", () => { exercise.root.scrollIntoView({ block: "start" }); exercise.cell.focus(); }]], "name");
      } else if (result.error.type === "NameError" && page.cells.slice(0, this.index).some((c) => c.ranGeneration !== page.generation)) {
        this.showNotice("上方还有单元没有在当前命名空间里运行过，这里用到的名字可能定义在那里。",
          [["运行上方单元", () => page.runAbove(this)]], "name");
      }
      return { ok: this.expectError, error: result.error };
    }
    this.output.setStatus(`完成 · ${seconds(elapsed)}`, "ok");
    return { ok: true };
  }
}

export class CellsPage {
  constructor(doc, sections, { completionsURL, editorURL, widgetBase, runtimeURL, storedEdits = true }) {
    this.doc = doc;
    this.widgetBase = widgetBase || "";
    this.slug = doc.body.dataset.page || location.pathname;
    this.completionsURL = completionsURL;
    this.generation = 0;
    this.preludeGeneration = -1;
    this.bar = doc.querySelector(".cells-bar");
    this.barStatus = this.bar?.querySelector(".cells-bar-status");
    this.prelude = this.bar?.querySelector(".cells-prelude")?.textContent || "";
    // python-runtime.js already on the page (a harness) is used as is; otherwise it loads when first needed.
    this.runtime = course().python?.getRuntime ? course().python.getRuntime()
      : runtimeURL ? new LazyRuntime(runtimeURL) : null;
    this.editorURL = editorURL;
    this.editor = null; // the API of assets/editor.js, once loaded
    this.editorSoon = false; // a stored edit is shown as plain text: highlight it without waiting for the reader
    this.firstUpgrades = new Set();
    // false: the page had no stored edit when it was shown, so a stored edit now is another tab's, made since —
    // offered like any other (a notice, by `onOtherTab`), not applied silently
    this.storedEdits = storedEdits;
    this.cells = sections.map((s, i) => new Cell(this, s, i));
    this.exercises = initExercises(this, doc);
    this.onOtherTab = watchOtherTabs(this.cells);
    this.chain = Promise.resolve();
    const runAll = this.bar?.querySelector('[data-action="run-all"]');
    if (runAll) {
      runAll.disabled = false;
      runAll.addEventListener("click", () => this.runAll());
    }
    if (!this.runtime) this.setBarStatus("Python 运行环境不可用：只能查看预先算好的输出。", "error");
    this.watchForPrefetch();
    this.watchForEditor();
    // The runtime's script and its index wait for the reader's first sign of life — a scroll, touch, pointer
    // move or key — so they are not part of the page's first view (issue 19), yet are there before any click on
    // 运行 (a run loads what is missing itself).
    if (this.runtime) {
      if (!(this.runtime instanceof LazyRuntime)) this.runtime.prepare({ index: false });
      this.prepareOnFirstInput(!option("noPrefetch") && !navigator.connection?.saveData);
    }
  }

  /** Carry out what the reader did before this controller arrived, in order (assets/cells.js kept it): a click
   *  on a button goes to that button, Ctrl/⌘/Shift+Enter in the code runs its cell, focus in the code brings
   *  the editor, with the caret where the reader clicked; another tab's save is offered as a notice. */
  replay(actions) {
    for (const a of actions) {
      if (a.storage) {
        this.onOtherTab(a.storage);
        continue;
      }
      if (a.button) {
        if (a.button.isConnected && !a.button.disabled && !a.button.hidden) a.button.click();
        continue;
      }
      const cell = this.cells.find((c) => c.section === (a.run || a.focus));
      if (!cell) continue;
      if (a.run) {
        cell.run();
        if (a.next) this.focusAfter(cell);
      } else if (document.activeElement === cell.pre) {
        cell.focusPoint = a.pointer ? { x: a.pointer.x, y: a.pointer.y } : null;
        this.warmUp();
        this.upgradeSoon(cell);
      }
    }
  }

  /** At the reader's first input: the runtime's script (if not on the page yet); with `prefetch`, also the
   *  runtime index and, once Python is idle, what this page's cells import (matplotlib). */
  prepareOnFirstInput(prefetch) {
    onFirstInput(() => {
      this.runtime.prepare({ index: prefetch });
      if (prefetch && this.runtime.preloadFor) this.runtime.preloadFor(this.cells.map((c) => c.original));
    });
  }

  /** Load the editor at an idle moment once a cell is within a screen or so of the viewport (or at once
   * when a stored edit is on show); pages read from the top never download it before the reader gets close. */
  watchForEditor() {
    if (option("noIdleEditor")) return;
    if (this.editorSoon) { whenIdleAfterLoad(() => this.ensureEditor()); return; }
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) { io.disconnect(); whenIdleAfterLoad(() => this.ensureEditorSoon()); }
    }, { rootMargin: "100% 0px" });
    for (const c of this.cells) io.observe(c.section);
  }

  /** Load the editor, unless Python is loading or running: then at the next idle moment after that.
   * Evaluating assets/editor.js (~60–100 ms here) and creating each editor (~40–80 ms) are main-thread tasks
   * that would stall the loading progress and the first output; a reader who focuses the code still gets
   * the editor at once (`warmUp`). */
  ensureEditorSoon() {
    const rt = this.runtime;
    const busy = () => rt && (rt.state === "loading" || rt.state === "running");
    if (!busy()) { this.ensureEditor(); return; }
    const onState = () => {
      if (busy()) return;
      rt.removeEventListener("statechange", onState);
      whenIdleAfterLoad(() => this.ensureEditorSoon());
    };
    rt.addEventListener("statechange", onState);
  }

  /** Load assets/editor.js (once) and upgrade every cell, `first` ones first, one cell per task. */
  ensureEditor(first = []) {
    for (const c of first) this.firstUpgrades.add(c);
    if (!this.editorLoading) {
      for (const c of this.cells) if (!c.view) c.section.dataset.editor = "loading";
      this.editorLoading = loadEditor(this.editorURL).then((api) => {
        this.editor = api;
        this.upgradeAll();
        return api;
      }, (err) => {
        // The static code keeps working (运行, Ctrl/⌘+Enter); only editing is unavailable.
        this.editorLoading = null;
        for (const c of this.cells) if (!c.view) c.section.dataset.editor = "static";
        console.warn("code editor failed to load", err); // eslint-disable-line no-console
      });
    }
    return this.editorLoading;
  }

  upgradeSoon(cell) {
    if (this.editor) this.upgradeNow(cell);
    else this.ensureEditor([cell]);
  }

  upgradeNow(cell) {
    try {
      cell.upgrade(this.editor);
    } catch (err) {
      cell.section.dataset.editor = "static";
      console.warn("code editor failed to start", cell.id, err); // eslint-disable-line no-console
    }
  }

  upgradeAll() {
    // Focused/clicked cells first, then the rest top to bottom; yielding between cells keeps each task short.
    const queue = [...this.firstUpgrades, ...this.cells.filter((c) => !this.firstUpgrades.has(c))];
    const step = () => {
      const cell = queue.shift();
      if (!cell) return;
      if (!cell.view) this.upgradeNow(cell);
      if (queue.length) setTimeout(step, 0);
    };
    // A cell the reader is waiting for is upgraded at once; otherwise yield first, so that evaluating the
    // editor script and creating the first editor are not one task.
    if (this.firstUpgrades.size) step();
    else setTimeout(step, 0);
  }

  /** Mount a course widget a cell sent (attention_core.display → {widget, data}) with the very module the
   *  page's widgets use (assets/widget-<name>.js; loaded now if this page has no such widget). */
  async mountWidget(box, spec) {
    const name = String(spec.widget || "");
    if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new Error(`未知的图表 ${name}`);
    const widgets = course().widgets || {};
    if (!widgets[name]) {
      if (!this.widgetScripts) this.widgetScripts = new Map();
      if (!this.widgetScripts.has(name)) {
        const base = this.widgetBase || document.baseURI;
        this.widgetScripts.set(name, new Promise((resolve, reject) => {
          const s = document.createElement("script");
          s.src = new URL(`widget-${name}.js`, base).href;
          s.onload = resolve;
          s.onerror = () => reject(new Error(`无法加载 widget-${name}.js`));
          document.head.appendChild(s);
        }));
      }
      await this.widgetScripts.get(name);
    }
    const mount = (course().widgets || {})[name];
    if (!mount) throw new Error(`未知的图表 ${name}`);
    this.widgetCount = (this.widgetCount || 0) + 1;
    box.id = box.id || `cell-widget-${this.widgetCount}`;
    mount(box, spec.data);
    box.dataset.ready = "true";
  }

  setBarStatus(text, kind = "") {
    if (!this.barStatus) return;
    this.barStatus.textContent = text;
    this.barStatus.dataset.kind = kind;
  }

  /** Start downloading Python when the reader gets near the code (the runtime waits for an idle moment). */
  watchForPrefetch() {
    if (!this.runtime || option("noPrefetch") || navigator.connection?.saveData) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) { io.disconnect(); this.runtime.prefetch(); }
    }, { rootMargin: "800px 0px" });
    for (const c of this.cells) io.observe(c.section);
  }

  /** The reader is at the code (focus): the editor, its autocomplete data and Python, all in the background. */
  warmUp() {
    this.ensureEditor().then((api) => api && api.loadCompletionData(this.completionsURL));
    if (this.runtime && !option("noPrefetch")) this.runtime.prefetch();
  }

  focusAfter(cell) {
    const next = this.cells.slice(cell.index + 1).find((c) => !c.hidden);
    if (next) {
      next.section.scrollIntoView({ block: "nearest" });
      next.focus();
    }
  }

  /** Load Python (progress in the page bar and the waiting cells' status lines). */
  async ensureLoaded(waiting) {
    if (this.runtime.state === "ready" || this.runtime.state === "running") return;
    const show = (p) => {
      this.setBarStatus(p.label, "loading");
      for (const c of waiting) if (!c.running) c.output.setStatus(p.label, "loading");
    };
    await this.runtime.load({ onProgress: show, codes: waiting.map((c) => c.code) });
    this.setBarStatus("Python 已就绪。", "ok");
    for (const c of waiting) if (!c.running) c.output.setStatus("");
  }

  async ensurePrelude() {
    if (this.preludeGeneration === this.generation || !this.prelude) return;
    const generation = this.generation;
    const r = await this.runtime.run(this.prelude, { cell: "prelude" });
    if (!r.ok) throw new Error(r.error ? r.error.traceback : "prelude failed");
    this.preludeGeneration = generation;
  }

  /** Serialize page operations (the namespace is shared): each op runs after the previous one. */
  enqueue(op) {
    const next = this.chain.then(op, op);
    this.chain = next.catch(() => {});
    return next;
  }

  run(cell) {
    whenIdleAfterLoad(() => this.ensureEditorSoon()); // whoever runs code is likely to edit it next
    if (!this.runtime) return Promise.resolve();
    if (cell.exercise) return cell.exercise.check(); // 检查: its own namespace, then the checks
    cell.output.setStatus("排队中…", "queued");
    cell.buttons.stop.hidden = false;
    cell.buttons.stop.disabled = false;
    return this.enqueue(async () => {
      try {
        await this.ensureLoaded([cell]);
        await this.ensurePrelude();
        // Hidden setup cells above run automatically: the reader can't be expected to run what they can't see.
        for (const c of this.cells.slice(0, cell.index)) {
          if (c.hidden && !c.exercise && c.ranGeneration !== this.generation) {
            const r = await c.execute();
            if (!r.ok) return r;
          }
        }
        await this.defineAbove(cell);
        return await cell.execute();
      } catch (err) {
        cell.setRunning(false);
        if (err && err.type === "Stopped") { cell.output.setStatus("已停止", "stopped"); return { ok: false }; }
        // A start that failed says why and what to do (runtime.js, readerMessage); the next 运行 tries again.
        const message = err && err.type === "LoadError" ? err.message : `Python 运行环境没能启动：${err && err.message || err}`;
        cell.output.setStatus("无法运行", "error");
        this.setBarStatus(message, "error");
        return { ok: false };
      }
    });
  }

  /** The names the exercises above `cell` hand to the page (`:defines:`), from the code that passed them. */
  async defineAbove(cell) {
    for (const ex of this.exercises) {
      const above = ex.cell !== cell && ex.root.compareDocumentPosition(cell.section) & Node.DOCUMENT_POSITION_FOLLOWING;
      if (above && ex.defines.length) await ex.defineForPage();
    }
  }

  /** The exercise above `cell` whose passing code defines `name`, if any. */
  exerciseDefining(name, cell) {
    return this.exercises.find((ex) => ex.cell !== cell && ex.defines.includes(name)
      && ex.root.compareDocumentPosition(cell.section) & Node.DOCUMENT_POSITION_FOLLOWING) || null;
  }

  async runCells(cells) {
    for (const c of cells) {
      const r = await this.run(c);
      if (!r || !r.ok) return false;
    }
    return true;
  }

  async runAll() {
    if (!this.runtime) return;
    if (this.cells.some((c) => c.ranGeneration === this.generation)) {
      await this.enqueue(async () => { await this.runtime.reset(); this.generation++; });
    }
    this.setBarStatus("正在依次运行本页全部代码…", "running");
    const ok = await this.runCells(this.cells.filter((c) => !c.exercise)); // an exercise is checked, not run
    this.setBarStatus(ok ? "全部运行完成。" : "运行在出错或停止的单元处中断。", ok ? "ok" : "error");
  }

  runAbove(cell) {
    cell.hideNotice();
    return this.runCells(this.cells.slice(0, cell.index).filter((c) => !c.exercise && c.ranGeneration !== this.generation));
  }

  /** 停止: a run that pauses ends at its next `await pause()` and the namespace stays; any other run ends with
   *  its worker (always within a second), and the namespace is gone. */
  async stop() {
    const stopped = this.cells.find((c) => c.running) || this.cells.find((c) => !c.buttons.stop.hidden);
    const { kept } = (await this.runtime.stop()) || { kept: false };
    if (!kept) this.generation++;
    for (const c of this.cells) {
      if (!c.running && !c.buttons.stop.hidden) { c.buttons.stop.hidden = true; c.output.setStatus("已取消", "stopped"); }
    }
    if (stopped) {
      stopped.setRunning(false);
      if (kept) {
        stopped.showNotice("已停止。Python 没有重启：停下之前算出的变量都还在，下面的单元可以接着用。", [], "stopped");
      } else {
        const above = this.cells.slice(0, stopped.index);
        stopped.showNotice("已停止。Python 已重启，命名空间已重置：之前定义的变量都已清空。",
          above.length ? [["重新运行上方单元", () => this.runAbove(stopped)]] : [], "stopped");
      }
      stopped.focus();
    }
    this.setBarStatus(kept ? "已停止，变量都保留着。" : "已停止，命名空间已重置。", "stopped");
  }
}
