// Exercises (builder/exercises/render.py): the learner's code lives in a code cell of the page (the editor, stored
// edits, Stop), whose 检查 — the button, or Ctrl/⌘+Enter — runs the learner's code and then the checks in the
// page's Python worker through the checker both the worker and the build hold (exercise_runtime.py), in a namespace
// of its own. The verdict comes back as JSON (the run's trailing repr) and is shown check by check, with the
// learner's message for a failure (expected vs got, shapes, the first differing element) and the numbers a passing
// check compared; the summary is announced (role=status). Help is earned: hints open one at a time (the first one
// opens by itself after a failed check), the reference solution after a pass, after three failed checks, or when
// the learner asks and confirms that asking is recorded. What the learner earned is kept in the course progress
// (site/progress.js: `exercises` of the page's record) and restored on the next visit; 重置这道练习 forgets it.
// The checks, the hints, the solution and the public checks' highlighted code are the exercise's data script
// (builder/exercises/render.py), loaded when the exercise nears the view or at the learner's first action on it.
import { loadProgress, storageAvailable, updatePage, PROGRESS_EVENT } from "../site/progress.js";
import { loadDataScript } from "../widgets/data-script.js";

export const FAILS_BEFORE_SOLUTION = 3;

let words = null;
/** The theme's words for exercises (theme/strings.yml, carried by the page's first exercise). */
function t(name, values = {}) {
  if (!words) {
    try { words = JSON.parse(document.querySelector(".exercise-strings")?.textContent || "{}"); } catch { words = {}; }
  }
  return String(words[name] ?? name).replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
}

/** The hidden checks as the build obfuscated them (render.py `obfuscate`): base64 of the reversed UTF-8 bytes. */
export function reveal(text) {
  const bytes = Uint8Array.from(atob(text || ""), (c) => c.charCodeAt(0)).reverse();
  return new TextDecoder().decode(bytes);
}

const IMPORT_RE = /^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)|import[ \t]+([A-Za-z_]\w*))/gm;

function importHead(code, imports) {
  const names = new Set(imports || []);
  for (const m of code.matchAll(IMPORT_RE)) names.add(m[1] || m[2]);
  const sorted = [...names].sort();
  return sorted.length ? "if False:\n" + sorted.map((n) => `    import ${n}\n`).join("") : "";
}

/** The Python a check runs: as builder/exercises/verify.py `harness_code` writes it for the build (plus the
 *  names a passing solution hands to the page, `defines`). */
export function harnessCode({ id, code, checks, hidden, imports, defines, uses }) {
  const fields = { id, code, checks, hidden };
  if (defines && defines.length) fields.defines = defines;
  if (uses && uses.length) fields.uses = uses; // the names of the exercises above that this code may call
  const payload = JSON.stringify(fields);
  return `${importHead(code, imports)}__import__("exercise_runtime").check(${JSON.stringify(payload)}, globals())\n`;
}

/** The Python that hands the names of code which passed before to the page (exercise_runtime.define). */
export function defineCode({ id, code, imports, defines, uses }) {
  const payload = JSON.stringify(uses && uses.length ? { id, code, defines, uses } : { id, code, defines });
  return `${importHead(code, imports)}__import__("exercise_runtime").define(${JSON.stringify(payload)}, globals())\n`;
}

export class ExerciseView {
  constructor(page, root, cell) {
    this.page = page;
    this.root = root;
    this.cell = cell;
    cell.exercise = this;
    this.data = JSON.parse(root.querySelector("script.exercise-data").textContent);
    this.id = this.data.id;
    this.slug = page.slug;
    this.canStore = storageAvailable();
    this.result = root.querySelector(".exercise-result");
    this.list = root.querySelector(".exercise-checks");
    this.hintsBox = root.querySelector(".exercise-hints");
    this.hintCount = this.data.hints || 0;
    this.extras = null; // the data script's content, once loaded
    this.solutionBox = root.querySelector(".exercise-solution");
    this.stateLabel = root.querySelector(".exercise-state");
    this.confirmBox = root.querySelector(".exercise-confirm");
    this.buttons = {};
    for (const b of root.querySelectorAll("[data-exercise-action]")) {
      this.buttons[b.dataset.exerciseAction] = b;
      b.disabled = false;
      b.addEventListener("click", () => this.act(b.dataset.exerciseAction));
    }
    this.confirmBox.addEventListener("keydown", (e) => { if (e.key === "Escape") this.act("solution-no"); });
    this.defines = this.data.defines || []; // names its passing code hands to the page's cells
    this.definedGeneration = -1; // the page's namespace (generation) that holds them
    this.publicChecks = root.querySelector(".exercise-public");
    this.publicChecks.addEventListener("toggle", () => { if (this.publicChecks.open) this.loadExtras().catch(() => {}); });
    this.restore();
    this.loadNearView();
  }

  /** The exercise's checks, hints and solution (its data script), loaded once; the public checks filled in. */
  loadExtras() {
    if (!this.extrasLoading) {
      this.extrasLoading = loadDataScript("exercises", this.data.extras).then((extras) => {
        this.extras = extras;
        const code = this.publicChecks.querySelector("code");
        if (code && !code.childNodes.length) code.innerHTML = extras.checks_html; // the build's highlighted code
        return extras;
      });
      this.extrasLoading.catch(() => { this.extrasLoading = null; }); // asked again, loaded again
    }
    return this.extrasLoading;
  }

  loadNearView() {
    if (typeof IntersectionObserver !== "function") { this.loadExtras().catch(() => {}); return; }
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) { io.disconnect(); this.loadExtras().catch(() => {}); }
    }, { rootMargin: "200px 0px" }); // in view, or about to be: there before the learner can act on it
    io.observe(this.root);
  }

  /** The code that passed, kept for the next visit when this exercise hands names to the page. */
  passedCode() {
    const rec = this.record();
    return rec.passed && typeof rec.code === "string" ? rec.code : null;
  }

  /** Before a cell below runs: hand this exercise's names to the page's namespace again (a new visit, or Python
   *  restarted) from the code that passed. Quietly: a cell that needs a name it could not give says so itself. */
  async defineForPage() {
    const page = this.page;
    const code = this.passedCode();
    if (!this.defines.length || code === null || this.definedGeneration === page.generation) return;
    const generation = page.generation;
    try {
      const r = await page.runtime.run(defineCode({ id: this.id, code, imports: this.data.imports, defines: this.defines, uses: this.data.uses }),
        { cell: `exercise-${this.id}` });
      const verdict = r.error ? null : JSON.parse(r.repr);
      if (verdict && verdict.ok) this.definedGeneration = generation;
    } catch (err) {
      if (err && err.type === "Stopped") throw err;
      console.warn("exercise: could not define", this.id, err); // eslint-disable-line no-console
    }
  }

  record() {
    if (!this.canStore) return this.memory || (this.memory = {});
    return ((loadProgress().pages[this.slug] || {}).exercises || {})[this.id] || {};
  }

  save(change) {
    if (!this.canStore) { change(this.memory || (this.memory = {})); this.sync(); return; }
    updatePage(this.slug, (r) => {
      r.exercises = r.exercises || {};
      const rec = r.exercises[this.id] || (r.exercises[this.id] = { passed: false, attempts: 0, failures: 0, hints: 0 });
      change(rec);
    });
    this.sync();
  }

  /** Show what the learner has earned so far (on load, and after every change); hints and the solution once the
   *  exercise's data script is there. */
  restore() {
    const rec = this.record();
    this.hintsBox.replaceChildren();
    this.solutionBox.hidden = true;
    this.sync();
    if (!(rec.hints > 0) && !this.solutionEarned(rec) && rec.solution !== "asked") return;
    this.loadExtras().then(() => {
      const now = this.record();
      this.hintsBox.replaceChildren();
      for (let i = 0; i < Math.min(now.hints || 0, this.hintCount); i++) this.showHint(i, false);
      if (this.solutionEarned(now) || now.solution === "asked") this.showSolution(false);
      this.sync();
    }, () => {});
  }

  solutionEarned(rec) {
    return !!rec.passed || (rec.failures || 0) >= FAILS_BEFORE_SOLUTION;
  }

  sync() {
    const rec = this.record();
    const total = this.hintCount;
    const opened = Math.min(rec.hints || 0, total);
    const hint = this.buttons.hint;
    hint.hidden = opened >= total;
    hint.textContent = t("exercise_hint_button", { n: opened + 1, total });
    this.buttons.solution.hidden = !this.solutionBox.hidden;
    let state = "new";
    let text = t("exercise_status_new");
    if (rec.passed) { state = "passed"; text = t("exercise_status_passed"); }
    else if (rec.attempts) { state = "tried"; text = t("exercise_status_tried", { n: rec.attempts }); }
    if (rec.solution === "asked") text += ` · ${t("exercise_status_solution")}`;
    this.stateLabel.dataset.state = state;
    this.stateLabel.textContent = text;
    this.root.dataset.state = state;
  }

  act(action) {
    if (action === "hint") this.nextHint();
    else if (action === "solution") this.askSolution();
    else if (action === "solution-yes") {
      this.save((r) => { r.solution = "asked"; });
      this.closeConfirm(false);
      this.loadExtras().then(() => this.showSolution(true), () => {});
    } else if (action === "solution-no") this.closeConfirm(true);
    else if (action === "use-solution") this.cell.setCode(this.solutionCode());
    else if (action === "reset") this.reset();
  }

  async nextHint(focus = true) {
    const rec = this.record();
    const n = Math.min(rec.hints || 0, this.hintCount);
    if (n >= this.hintCount) return;
    await this.loadExtras();
    this.save((r) => { r.hints = n + 1; });
    this.showHint(n, focus);
  }

  showHint(index, focus) {
    const box = document.createElement("section");
    box.className = "exercise-hint";
    box.tabIndex = -1;
    const title = document.createElement("p");
    title.className = "exercise-hint-title";
    title.textContent = t("exercise_hint", { n: index + 1, total: this.hintCount });
    const hint = document.createElement("template");
    hint.innerHTML = this.extras.hints[index]; // the build's own HTML (Markdown and KaTeX), like the page's
    box.append(title, hint.content);
    box.setAttribute("aria-label", title.textContent);
    this.hintsBox.appendChild(box);
    if (focus) box.focus();
  }

  async askSolution() {
    if (this.solutionEarned(this.record())) { await this.loadExtras(); this.showSolution(true); return; }
    this.confirmBox.hidden = false;
    this.buttons.solution.setAttribute("aria-expanded", "true");
    this.buttons["solution-no"].focus();
  }

  closeConfirm(focus) {
    this.confirmBox.hidden = true;
    this.buttons.solution.setAttribute("aria-expanded", "false");
    if (focus) this.buttons.solution.focus();
  }

  solutionCode() {
    return this.extras.solution.replace(/\n$/, "");
  }

  showSolution(focus) {
    const body = this.solutionBox.querySelector(".exercise-solution-body");
    const pre = document.createElement("pre");
    pre.className = "exercise-code";
    pre.tabIndex = 0;
    const code = document.createElement("code");
    code.className = "language-python";
    code.innerHTML = this.extras.solution_html; // the build's highlighted code
    pre.appendChild(code);
    body.replaceChildren(pre);
    this.solutionBox.hidden = false;
    this.buttons.solution.hidden = true;
    if (focus) {
      this.solutionBox.tabIndex = -1;
      this.solutionBox.focus();
    }
  }

  reset() {
    if (this.canStore) {
      updatePage(this.slug, (r) => { if (r.exercises) delete r.exercises[this.id]; });
    } else this.memory = {};
    this.cell.resetCode();
    this.list.replaceChildren();
    this.list.hidden = true;
    this.closeConfirm(false);
    this.restore();
    this.announce(t("exercise_reset_done"));
  }

  announce(text) {
    // Empty, then the text: a live region announces a change, also to the same words.
    this.result.textContent = "";
    this.result.dataset.kind = "";
    setTimeout(() => { this.result.textContent = text; }, 50);
  }

  /** 检查: queued with the page's other runs (one worker), loads Python if needed, then runs the checker. */
  check() {
    const cell = this.cell;
    const page = this.page;
    if (!page.runtime) return Promise.resolve({ ok: false });
    cell.output.setStatus(t("exercise_checking"), "queued");
    const extras = this.loadExtras(); // the checks: usually here already (loaded near the view)
    extras.catch(() => {});
    cell.buttons.stop.hidden = false;
    cell.buttons.stop.disabled = false;
    return page.enqueue(async () => {
      try {
        await extras;
        await page.ensureLoaded([cell]);
        await page.defineAbove(cell); // the learner's own pieces from the exercises above, which this one may use
      } catch (err) {
        if (err && err.type === "Stopped") { cell.setRunning(false); return { ok: false, stopped: true }; }
        cell.setRunning(false);
        const message = err && err.type === "LoadError" ? err.message : `Python 运行环境没能启动：${(err && err.message) || err}`;
        cell.output.setStatus("无法运行", "error");
        this.announce(message);
        return { ok: false };
      }
      return this.run();
    });
  }

  async run() {
    const cell = this.cell;
    cell.hideNotice();
    cell.clearErrorLine();
    cell.output.begin();
    cell.output.label.textContent = t("exercise_output");
    cell.output.setStatus(t("exercise_checking"), "running");
    cell.setRunning(true);
    this.root.dataset.checking = "true";
    const started = performance.now();
    let r;
    try {
      const { checks, hidden } = this.extras;
      r = await this.page.runtime.run(harnessCode({ ...this.data, checks, defines: this.defines, code: cell.code, hidden: reveal(hidden) }), {
        cell: `exercise-${this.id}`,
        onStdout: (text) => cell.output.append("stdout", text),
        onStderr: (text) => cell.output.append("stderr", text),
      });
    } catch (err) {
      cell.setRunning(false);
      delete this.root.dataset.checking;
      if (err && err.type === "Stopped") {
        cell.output.setStatus("已停止", "stopped");
        this.announce(t("exercise_stopped"));
        this.root.dataset.verdict = "stopped";
        return { ok: false, stopped: true };
      }
      cell.output.error({ type: "Error", message: String((err && err.message) || err), traceback: "" });
      cell.output.setStatus("出错", "error");
      this.announce(t("exercise_crashed", { message: String((err && err.message) || err) }));
      this.root.dataset.verdict = "crashed";
      return { ok: false };
    }
    cell.setRunning(false);
    delete this.root.dataset.checking;
    const ms = performance.now() - started;
    this.root.dataset.ms = String(Math.round(ms));
    let verdict = null;
    try { verdict = r.error ? null : JSON.parse(r.repr); } catch { verdict = null; }
    if (!verdict) { // the run itself failed (a crash, memory): said like any cell's error
      if (r.error) cell.output.error(r.error);
      cell.output.setStatus("出错", "error");
      this.announce(t("exercise_crashed", { message: r.error ? `${r.error.type}: ${r.error.message}` : "?" }));
      this.root.dataset.verdict = "crashed";
      return { ok: false };
    }
    if (r.truncated) cell.output.markTruncated();
    cell.output.setStatus(`${verdict.ok ? "通过" : "未通过"} · ${(ms / 1000).toFixed(2)} s`, verdict.ok ? "ok" : "error");
    if (verdict.ok && this.defines.length) this.definedGeneration = this.page.generation;
    this.show(verdict, cell.code);
    return { ok: verdict.ok };
  }

  show(verdict, code) {
    const cell = this.cell;
    const before = this.record();
    const failures = (before.failures || 0) + (verdict.ok ? 0 : 1);
    this.save((r) => {
      r.attempts = (r.attempts || 0) + 1;
      r.failures = failures;
      if (verdict.ok) r.passed = true;
      if (verdict.ok && this.defines.length) r.code = code; // what the cells below will use on the next visit
    });
    this.list.replaceChildren();
    let summary;
    if (verdict.error && verdict.error.part === "code") {
      cell.output.error({ type: verdict.error.type, message: verdict.error.message, traceback: verdict.error.traceback });
      if (verdict.error.line) cell.setErrorLine(verdict.error.line);
      summary = verdict.error.line ? t("exercise_verdict_error", { line: verdict.error.line }) : t("exercise_verdict_error_noline");
      summary += ` ${verdict.error.type}: ${verdict.error.message}`;
    } else {
      for (const check of verdict.checks) this.list.appendChild(this.item(check));
      if (verdict.error) summary = t("exercise_verdict_checks_error", { message: verdict.error.message });
      else if (verdict.ok) summary = t("exercise_verdict_pass", { total: verdict.total });
      else summary = t("exercise_verdict_fail", { passed: verdict.passed, total: verdict.total });
      if (verdict.ok && verdict.defined && verdict.defined.length) {
        summary += ` ${t("exercise_defined", { names: verdict.defined.join("、") })}`;
      }
    }
    this.list.hidden = !this.list.children.length;
    const missing = this.missingFromAbove(verdict);
    if (missing) summary += ` ${t("exercise_uses_missing", { name: missing })}`;
    const rec = this.record();
    if (!verdict.ok) {
      const left = FAILS_BEFORE_SOLUTION - failures;
      if (!rec.hints && this.hintCount) this.nextHint(false); // a wrong attempt brings the first hint
      if (left > 0 && !rec.passed && rec.solution !== "asked") summary += ` ${t("exercise_solution_after", { n: left })}`;
    }
    const opens = this.solutionBox.hidden && this.solutionEarned(this.record());
    if (opens) {
      this.showSolution(false);
      summary += ` ${t("exercise_solution_open")}`;
    }
    this.root.dataset.verdict = verdict.ok ? "pass" : "fail";
    this.result.dataset.kind = verdict.ok ? "ok" : "error";
    this.announce(summary);
    this.result.dataset.kind = verdict.ok ? "ok" : "error";
    this.sync();
  }

  /** A name of an exercise above that the learner's code called before passing that exercise, if any. */
  missingFromAbove(verdict) {
    const uses = this.data.uses || [];
    const texts = [verdict.error && verdict.error.message, ...(verdict.checks || []).map((c) => c.message)];
    for (const text of texts) {
      const m = /name '([^']+)' is not defined/.exec(String(text || ""));
      if (m && uses.includes(m[1])) return m[1];
    }
    return null;
  }

  item(check) {
    const li = document.createElement("li");
    li.className = `exercise-check-item ${check.passed ? "is-pass" : "is-fail"}`;
    const head = document.createElement("p");
    head.className = "exercise-check-head";
    const mark = document.createElement("strong");
    mark.textContent = check.passed ? `✓ ${t("exercise_passed_one")}` : `✗ ${t("exercise_failed_one")}`;
    head.append(mark, " ", (check.hidden ? `${t("exercise_hidden_check")}：` : "") + check.label);
    li.appendChild(head);
    const lines = check.passed ? check.notes : [check.message, ...(check.traceback ? [check.traceback] : [])];
    for (const text of lines) {
      if (!text) continue;
      const p = document.createElement("pre");
      p.className = check.passed ? "exercise-note" : "exercise-message";
      p.textContent = text;
      li.appendChild(p);
    }
    return li;
  }
}

/** The page's progress in exercises, for the page-done box (site/progress.js shows the course's). */
export function exerciseCounts(slug, ids) {
  const recs = ((loadProgress().pages[slug] || {}).exercises) || {};
  return { passed: ids.filter((id) => recs[id] && recs[id].passed).length, total: ids.length };
}

export function initExercises(page, doc) {
  const views = [];
  for (const root of doc.querySelectorAll(".exercise[data-exercise-id]")) {
    const cell = page.cells.find((c) => root.contains(c.section));
    if (!cell) continue;
    try { views.push(new ExerciseView(page, root, cell)); } catch (err) { console.warn("exercise failed to start", err); } // eslint-disable-line no-console
  }
  const box = doc.querySelector("[data-page-done]");
  if (views.length && box) {
    const line = doc.createElement("p");
    line.className = "exercise-page-progress";
    const ids = views.map((v) => v.id);
    const show = () => { line.textContent = t("exercise_page_progress", exerciseCounts(page.slug, ids)); };
    box.appendChild(line);
    doc.addEventListener(PROGRESS_EVENT, show);
    show();
  }
  return views;
}
