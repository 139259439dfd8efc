// Numbers a widget's build keeps out of the page (too many for its first view, issue 19), loaded when it mounts.
import { part } from "../shared/course.js";
import { loadScript } from "../shared/load-script.js";

/** The numbers a widget keeps out of the page (builder: `widget_data_script`), from their own classic script,
 *  loaded once per key. */
export function loadDataScript(partName, data) {
  const store = part(partName);
  const key = `d${data.key}`;
  if (store[key]) return Promise.resolve(store[key]);
  return loadScript(data.data).then(() => store[key] || Promise.reject(new Error(`${data.data} is empty`)));
}
