// Site search: a header button (or "/" and Ctrl/⌘+K) opens a modal dialog searching every page's title,
// headings and text. The index (built by builder/search_index.py) is a classic script that sets
// Course.search.index; it is injected the first time the dialog opens, together with the code that
// ranks and highlights results (theme/js/site/search-engine.js → assets/search.js), so first view stays light,
// and a <script src> works on file:// where fetch does not. Page text is only ever inserted as text nodes.

import { part } from "../shared/course.js";

let indexPromise = null;

/** Load `src` unless Course.search[key] is there already; → that value, which the script sets. */
function loadScript(src, key) {
  const search = part("search");
  if (search[key]) return Promise.resolve(search[key]);
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = src;
    script.async = true;
    script.onload = () => (search[key] ? resolve(search[key]) : reject(new Error(`${src} is empty`)));
    script.onerror = () => {
      script.remove();
      reject(new Error(`cannot load ${src}`));
    };
    document.head.append(script);
  });
}

/** The index and the code that searches it (assets/search.js), both as <script src>: works on file://. */
function loadIndex(src, engineSrc) {
  if (!indexPromise) {
    indexPromise = Promise.all([loadScript(src, "index"), loadScript(engineSrc, "engine")]).catch((err) => {
      indexPromise = null;
      throw err;
    });
  }
  return indexPromise;
}

function buildDialog(doc) {
  const dialog = doc.createElement("dialog");
  dialog.className = "search-dialog";
  dialog.setAttribute("aria-labelledby", "search-dialog-title");
  dialog.setAttribute("aria-modal", "true");
  dialog.innerHTML = `
    <div class="search-box" role="search">
      <h2 id="search-dialog-title" class="visually-hidden">搜索课程</h2>
      <svg class="search-icon" viewBox="0 0 20 20" width="18" height="18" aria-hidden="true" focusable="false"><circle cx="8.5" cy="8.5" r="5.5" fill="none" stroke="currentColor" stroke-width="2"/><path d="M13 13l4.5 4.5" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>
      <input class="search-input" type="text" role="combobox" aria-label="搜索课程内容" aria-autocomplete="list"
        aria-controls="search-results" aria-expanded="false" autocomplete="off" spellcheck="false" enterkeyhint="go"
        placeholder="搜索：缩放、温度、softmax…">
      <button type="button" class="search-close">关闭<span class="visually-hidden">搜索</span></button>
    </div>
    <p class="search-status" role="status" aria-live="polite"></p>
    <ul class="search-results" id="search-results" role="listbox" aria-label="搜索结果"></ul>
    <p class="search-help" aria-hidden="true"><kbd>↑</kbd><kbd>↓</kbd> 选择 · <kbd>Enter</kbd> 打开 · <kbd>Esc</kbd> 关闭</p>`;
  doc.body.append(dialog);
  return dialog;
}

export function initSearch(doc) {
  const opener = doc.querySelector(".search-open");
  if (!opener || typeof HTMLDialogElement === "undefined") return;
  const src = opener.dataset.searchIndex;
  const engineSrc = opener.dataset.searchEngine;
  let dialog = null;
  let input = null;
  let list = null;
  let status = null;
  let index = null;
  let engine = null; // { queryTerms, search, highlighted, snippetOf, resultHref, MAX_RESULTS } from assets/search.js
  let active = -1;
  let returnFocus = null;

  function options() {
    return [...list.querySelectorAll("[role='option']")];
  }

  function setActive(i) {
    const all = options();
    if (!all.length) {
      active = -1;
      input.removeAttribute("aria-activedescendant");
      return;
    }
    active = (i + all.length) % all.length;
    all.forEach((el, n) => el.setAttribute("aria-selected", String(n === active)));
    input.setAttribute("aria-activedescendant", all[active].id);
    all[active].scrollIntoView({ block: "nearest" });
  }

  function render() {
    list.replaceChildren();
    active = -1;
    input.removeAttribute("aria-activedescendant");
    const query = input.value.trim();
    if (!index) return;
    if (!query) {
      status.textContent = "";
      input.setAttribute("aria-expanded", "false");
      return;
    }
    const { queryTerms, search, highlighted, snippetOf, resultHref, variantsOf, MAX_RESULTS } = engine;
    const terms = queryTerms(query).flatMap((term) => variantsOf(index, term)); // highlight 遮罩 for 遮罩 too
    const results = search(index, query);
    results.forEach((result, n) => {
      const [, heading, , text] = index.sections[result.section];
      const li = doc.createElement("li");
      li.id = `search-result-${n}`;
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", "false");
      const a = doc.createElement("a");
      a.className = "search-result";
      a.href = resultHref(index, result);
      a.tabIndex = -1;
      const where = doc.createElement("span");
      where.className = "search-result-where";
      const page = doc.createElement("span");
      page.className = "search-result-page";
      page.append(highlighted(index.pages[result.page][1], terms));
      where.append(page);
      if (heading) {
        const h = doc.createElement("span");
        h.className = "search-result-heading";
        h.append(highlighted(heading, terms));
        where.append(doc.createTextNode(" › "), h);
      }
      const snippet = doc.createElement("span");
      snippet.className = "search-result-snippet";
      snippet.append(highlighted(snippetOf(text, terms), terms));
      a.append(where, snippet);
      a.addEventListener("click", () => close(false));
      li.append(a);
      li.addEventListener("mousemove", () => {
        if (active !== n) setActive(n);
      });
      list.append(li);
    });
    input.setAttribute("aria-expanded", String(results.length > 0));
    status.textContent = results.length
      ? `找到 ${results.length}${results.length === MAX_RESULTS ? "+" : ""} 条结果`
      : `没有找到与“${query}”相关的内容`;
    if (results.length) setActive(0);
  }

  function go() {
    const all = options();
    if (active < 0 || !all[active]) return;
    const href = all[active].querySelector("a").href;
    close(false);
    window.location.href = href;
  }

  function close(restoreFocus = true) {
    if (!dialog || !dialog.open) return;
    dialog.close();
    if (restoreFocus && returnFocus && returnFocus.isConnected) returnFocus.focus();
  }

  function ensureDialog() {
    if (dialog) return;
    dialog = buildDialog(doc);
    input = dialog.querySelector(".search-input");
    list = dialog.querySelector(".search-results");
    status = dialog.querySelector(".search-status");
    input.addEventListener("input", render);
    input.addEventListener("keydown", (event) => {
      if (event.key === "ArrowDown") {
        event.preventDefault();
        setActive(active + 1);
      } else if (event.key === "ArrowUp") {
        event.preventDefault();
        setActive(active - 1);
      } else if (event.key === "Enter" && !event.isComposing) {
        event.preventDefault();
        go();
      }
    });
    dialog.querySelector(".search-close").addEventListener("click", () => close());
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault(); // Esc: close ourselves so focus goes back where it was
      close();
    });
    dialog.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        close();
      } else if (event.key === "Tab") {
        // Keep focus inside the dialog: the input and the close button (results are reached with arrows).
        const focusables = [input, dialog.querySelector(".search-close")];
        const at = focusables.indexOf(doc.activeElement);
        event.preventDefault();
        focusables[(at + (event.shiftKey ? -1 : 1) + focusables.length) % focusables.length].focus();
      }
    });
    dialog.addEventListener("click", (event) => {
      if (event.target === dialog) close(); // a click on the backdrop
    });
  }

  function open() {
    ensureDialog();
    if (dialog.open) {
      input.focus();
      return;
    }
    returnFocus = doc.activeElement;
    dialog.showModal();
    input.focus();
    input.select();
    if (!index) {
      status.textContent = "正在加载搜索索引…";
      loadIndex(src, engineSrc).then(
        ([loaded, code]) => {
          engine = code;
          index = loaded;
          status.textContent = "";
          render();
        },
        () => {
          status.textContent = "搜索索引加载失败，请刷新页面再试。";
        },
      );
    }
  }

  opener.addEventListener("click", open);
  doc.addEventListener("keydown", (event) => {
    const key = event.key.toLowerCase();
    if ((event.ctrlKey || event.metaKey) && key === "k" && !event.altKey) {
      event.preventDefault();
      open();
      return;
    }
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    const target = event.target;
    const editable = target && (target.isContentEditable || /^(input|textarea|select)$/i.test(target.tagName));
    if (editable) return;
    event.preventDefault();
    open();
  });
  opener.hidden = false;
  // index.html?q=… (the 404 page's search form): open the dialog with that query.
  const asked = new URLSearchParams(window.location.search).get("q");
  if (asked) {
    open();
    input.value = asked;
    render();
  }
  // For measurements and tests: run a query against the loaded index (null until the dialog has loaded it).
  Object.assign(part("search"), { open, search: (query) => (index ? engine.search(index, query) : null) });
}
