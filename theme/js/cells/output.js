// The output area of one cell. Everything the program produced is inserted as text (textContent / text
// nodes), never as HTML, so printing "<img src=x onerror=…>" shows exactly those characters.  Figures come
// as PNG bytes and become an <img> of a blob: URL; course widgets (attention_core.display) come as JSON
// and are mounted by the page's own widget module (widgets.js) — Python never supplies markup.
// The structure mirrors the build-time output rendered by builder/cells/render.py, so both read the same.

export const MAX_LINES = 2000;
const TRUNCATED = "输出过长，已截断";

/** [text cut to at most MAX_LINES lines, whether it was cut]: tracebacks and error messages are capped like
 *  the streamed output (an exception can carry a 5,000-line message). */
export function capLines(text) {
  let end = -1;
  for (let n = 0; n < MAX_LINES; n++) {
    end = text.indexOf("\n", end + 1);
    if (end === -1) return [text, false];
  }
  return [text.slice(0, end + 1), end + 1 < text.length];
}

export class OutputView {
  constructor(root, { mountWidget } = {}) {
    this.root = root;
    this.mountWidget = mountWidget || null;
    this.urls = [];
    this.log = root.querySelector(".cell-log");
    this.widgets = root.querySelector(".cell-widgets");
    this.buildWidgets = this.widgets ? [...this.widgets.childNodes].map((n) => n.cloneNode(true)) : [];
    this.label = root.querySelector(".cell-output-label");
    this.buildLabel = this.label.textContent; // "预先算好的输出", or an exercise's "检查输出"
    this.status = root.querySelector(".cell-status");
    this.buildNodes = [...this.log.childNodes].map((n) => n.cloneNode(true));
    this.lines = 0;
    this.truncated = false;
    this.last = null; // {stream, text: Text}
    this.live = new Map(); // a live display's name (meta.update) → {img} or {box}: later displays redraw it
  }

  setStatus(text, kind = "") {
    this.status.textContent = text;
    this.status.dataset.kind = kind;
  }

  /** Start a fresh run: clear the build-time (or previous) output. */
  begin() {
    this.log.replaceChildren();
    this._clearDisplays();
    this.lines = 0;
    this.truncated = false;
    this.last = null;
    this.root.dataset.origin = "browser";
    this.root.removeAttribute("data-empty");
    this.root.removeAttribute("data-stale");
    this.label.textContent = "运行输出";
    this.setStatus("运行中…", "running");
  }

  /** The build-time output under code the reader has changed says where it came from (and is dimmed). */
  markSourceChanged(changed) {
    if (this.root.dataset.origin !== "build") return;
    const stale = changed && (this.buildNodes.length > 0 || this.buildWidgets.length > 0); // nothing shown, nothing stale
    this.root.toggleAttribute("data-stale", stale);
    this.label.textContent = stale ? "输出来自原始代码（你的修改尚未运行）" : this.buildLabel;
  }

  /** Back to what the page shipped with (after 重置). */
  restoreBuildOutput() {
    this.log.replaceChildren(...this.buildNodes.map((n) => n.cloneNode(true)));
    this._clearDisplays();
    if (this.widgets) {
      this.widgets.replaceChildren(...this.buildWidgets.map((n) => n.cloneNode(true)));
      // clones carry no listeners: mount the build-time widgets again from their embedded JSON
      for (const box of this.widgets.querySelectorAll(".widget[data-widget]")) {
        const script = box.querySelector("script.widget-data");
        if (!script || !this.mountWidget) continue;
        let data;
        try { data = JSON.parse(script.textContent); } catch { continue; }
        this.mountWidget(box, { widget: box.dataset.widget, data }).catch(() => {});
      }
    }
    this.root.dataset.origin = "build";
    if (!this.buildNodes.length) this.root.setAttribute("data-empty", "");
    this.label.textContent = this.buildLabel;
    this.setStatus("");
    this.last = null;
  }

  _span(cls, text) {
    const span = document.createElement("span");
    span.className = cls;
    span.textContent = text;
    this.log.appendChild(span);
    return span;
  }

  markTruncated() {
    if (this.truncated) return;
    this.truncated = true;
    this.last = null;
    this._span("cell-truncated", TRUNCATED);
  }

  /** Streamed stdout/stderr text; capped at MAX_LINES lines for the whole run (like the runtime). */
  append(stream, text) {
    if (this.truncated || !text) return;
    const room = MAX_LINES - this.lines;
    let count = 0;
    let cut = -1;
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
      if (++count === room) cut = i + 1;
    }
    const overflow = count > room;
    if (overflow) text = text.slice(0, Math.max(cut, 0));
    this.lines += Math.min(count, room);
    if (text) {
      if (this.last && this.last.stream === stream) this.last.text.appendData(text);
      else {
        const node = document.createTextNode(text);
        this._span(`cell-${stream}`, "").appendChild(node);
        this.last = { stream, text: node };
      }
    }
    if (overflow) this.markTruncated();
  }

  error(err) {
    this.last = null;
    const [text, cut] = capLines(err.traceback || `${err.type}: ${err.message}`);
    this._span("cell-error", text);
    if (cut) this.markTruncated();
  }

  result(text) {
    this.last = null;
    this._span("cell-result", text);
  }

  _clearDisplays() {
    for (const url of this.urls.splice(0)) URL.revokeObjectURL(url);
    if (this.widgets) this.widgets.replaceChildren();
    this.live.clear();
  }

  _widgetBox() {
    if (!this.widgets) {
      this.widgets = document.createElement("div");
      this.widgets.className = "cell-widgets";
      this.root.appendChild(this.widgets);
    }
    return this.widgets;
  }

  /** Rich output of the run (cell_runtime.display): a PNG figure or a course widget's JSON. A display with
   *  `meta.update` is live: a later one of the same name redraws it where it stands (a chart while a loop runs). */
  display(kind, data, meta = {}) {
    const name = meta.update != null ? String(meta.update) : null;
    const shown = name !== null ? this.live.get(name) : null;
    if (shown) { this._redraw(shown, kind, data, meta); return; }
    this.last = null;
    this.root.removeAttribute("data-empty");
    if (kind === "image/png" && data instanceof Uint8Array) {
      const url = URL.createObjectURL(new Blob([data], { type: "image/png" }));
      this.urls.push(url);
      const img = document.createElement("img");
      if (name !== null) this.live.set(name, { img, url });
      img.className = "cell-figure";
      img.alt = String(meta.alt || "matplotlib 图");
      if (meta.cssWidth) img.width = meta.cssWidth;
      if (meta.cssHeight) img.height = meta.cssHeight;
      img.src = url;
      this.log.appendChild(img);
      return;
    }
    if (kind === "application/vnd.course.widget+json" && typeof data === "string") {
      let spec;
      try { spec = JSON.parse(data); } catch { this.note("无法显示：数据不是有效的 JSON"); return; }
      const box = document.createElement("div");
      box.className = "widget cell-widget";
      box.dataset.widget = String(spec.widget || "");
      if (name !== null) this.live.set(name, { box, widget: box.dataset.widget });
      const body = document.createElement("div");
      body.className = "widget-body";
      body.textContent = "正在加载图表…";
      box.appendChild(body);
      this._widgetBox().appendChild(box);
      if (!this.mountWidget) { body.textContent = "无法显示图表。"; return; }
      this.mountWidget(box, spec).catch((err) => { body.textContent = `无法显示图表：${err && err.message || err}`; });
      return;
    }
    this.note(`（无法显示的输出：${kind}）`);
  }

  /** A live display's next state: the same <img> with new bytes, or the same widget mounted again with new data
   *  (a widget's `mount` redraws in place when called again on its root). */
  _redraw(shown, kind, data, meta) {
    if (shown.img && kind === "image/png" && data instanceof Uint8Array) {
      const url = URL.createObjectURL(new Blob([data], { type: "image/png" }));
      this.urls.push(url);
      shown.img.src = url;
      if (meta.alt) shown.img.alt = String(meta.alt);
      URL.revokeObjectURL(shown.url);
      shown.url = url;
      return;
    }
    if (shown.box && kind === "application/vnd.course.widget+json" && typeof data === "string" && this.mountWidget) {
      let spec;
      try { spec = JSON.parse(data); } catch { return; }
      if (String(spec.widget || "") !== shown.widget) return;
      this.mountWidget(shown.box, spec).catch(() => {});
    }
  }

  note(text) {
    this.last = null;
    this._span("cell-note", text);
  }
}
