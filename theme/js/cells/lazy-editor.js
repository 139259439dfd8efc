// Loads assets/editor.js (CodeMirror + autocomplete) on demand, once per page. A <script src>, not
// import(): dynamic imports and fetch() are blocked on file://. The URL (with its ?v= content hash) comes
// from the data-editor attribute the page template writes on the cells.js <script> tag.

import { part } from "../shared/course.js";

let loading = null;
const loaded = () => (part("editor").createEditor ? part("editor") : null);

/** → Promise of the editor API ({createEditor, setCode, …}); rejects if the script cannot load. */
export function loadEditor(url) {
  if (loaded()) return Promise.resolve(loaded());
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      if (!url) { reject(new Error("no editor URL")); return; }
      const s = document.createElement("script");
      s.src = url;
      s.onload = () => (loaded() ? resolve(loaded()) : reject(new Error("editor did not register")));
      s.onerror = () => { loading = null; s.remove(); reject(new Error(`could not load ${url}`)); };
      document.head.appendChild(s);
    });
  }
  return loading;
}

/** Run `fn` when the browser is idle after the page has loaded (so it never competes with first paint). */
export function whenIdleAfterLoad(fn, timeout = 2000) {
  const idle = () => (window.requestIdleCallback ? requestIdleCallback(fn, { timeout }) : setTimeout(fn, 50));
  if (document.readyState === "complete") idle();
  else window.addEventListener("load", idle, { once: true });
}
