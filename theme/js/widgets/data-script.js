// Numbers a widget's build keeps out of the page (too many for its first view, issue 19), loaded when it mounts.
import { part } from "../shared/course.js";

/** The numbers a widget keeps out of the page (builder: `browser_data_script(part, "d" + key, …)`), from their own
 *  classic script (a <script src>: fetch() is blocked on file://), loaded once per key. */
export function loadDataScript(partName, data) {
  const store = part(partName);
  const key = `d${data.key}`;
  if (store[key]) return Promise.resolve(store[key]);
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = data.data;
    script.onload = () => (store[key] ? resolve(store[key]) : reject(new Error(`${data.data} is empty`)));
    script.onerror = () => { script.remove(); reject(new Error(`cannot load ${data.data}`)); };
    document.head.append(script);
  });
}
