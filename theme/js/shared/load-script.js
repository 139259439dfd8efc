// One classic script injected and waited for (fetch() is blocked on file://, a <script src> is not). The element
// goes once it has run: what it defined stays.
// inOrder=false: each script runs in its own task as soon as it has loaded (async scripts). Ordered
// (async=false) scripts that are all loaded already would run back to back in ONE long task.
export function loadScript(url, inOrder = true) {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = url;
    s.async = !inOrder;
    s.onload = () => { s.remove(); resolve(); };
    s.onerror = () => { s.remove(); reject(new Error(`无法加载 ${url}`)); };
    document.head.appendChild(s);
  });
}
