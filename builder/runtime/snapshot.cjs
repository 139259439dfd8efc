// Memory snapshot (builder/runtime/snapshot.py, memory_snapshot, which explains the scheme): boots Pyodide
// under Node, installs the NumPy pack, imports the warm modules and writes the heap (+ its dynlibs record).
const [pyodideDir, stdlib, pack, out, sitePackages, warm, envJSON, courseRuntime, courseDir, packsModule] = process.argv.slice(2);
const fs = require("fs");
const { loadPyodide } = require(pyodideDir + "/pyodide.js");
const TABLE_SLACK = 64;
// Every global-offset-table entry (the address of each data symbol and table slot of each function the
// libraries share): the browser computes the same digest after relinking and refuses a mismatch.
function gotDigest(GOT) {
  const text = Object.keys(GOT).sort().map((k) => `${k}=${GOT[k].value}`).join("\n");
  return require("crypto").createHash("sha256").update(text).digest("hex");
}
// The same heap from the same inputs on every machine (two builds are byte-identical): the interpreter's entropy
// (hash secret: PYTHONHASHSEED in the env, builder/runtime/snapshot.py; `random`'s and NumPy's seeds) comes from a
// fixed stream, and the files' times from a fixed clock. The browser reseeds both generators after restoring
// (theme/js/python/worker.js).
let state = 0x9e3779b9;
globalThis.crypto.getRandomValues = (view) => {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  for (let i = 0; i < bytes.length; i++) {
    state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
    bytes[i] = state & 0xff;
  }
  return view;
};
const FIXED_TIME = Date.UTC(2024, 0, 1);
Date.now = () => FIXED_TIME;
// A freed block keeps what it held (dlmalloc does not clear it): take every free block the heap has, zeroed by
// calloc, and give it back — the snapshot then holds zeros there, which compress to nothing (−0.3 MB shipped).
// Blocks up to 128 KiB only, and none that moves the heap's end: larger ones would be mapped anew and grow the
// memory (measured: a 36 MB heap became 70 MB).
function zeroFreeMemory(M) {
  const memory = M.HEAPU8.buffer.byteLength;
  const taken = [];
  for (let size = 1 << 17; size >= 16; size >>= 1) {
    for (;;) {
      const end = M._sbrk(0);
      const block = M._calloc(1, size);
      if (!block) break;
      taken.push(block);
      if (M._sbrk(0) !== end) break;
    }
  }
  for (const block of taken) M._free(block);
  if (M.HEAPU8.buffer.byteLength !== memory) throw new Error("zeroing the free memory grew the heap");
}
(async () => {
  const py = await loadPyodide({ indexURL: pyodideDir + "/", stdLibURL: stdlib, env: JSON.parse(envJSON), _makeSnapshot: true });
  const M = py._module;
  // The pack's files, written by the browser's own code (theme/js/python/packs.js; a Python unzip would
  // also leave garbage in the heap).
  const { installPack } = await import(require("url").pathToFileURL(packsModule).href);
  const libs = installPack(py.FS, pack, new Uint8Array(fs.readFileSync(pack)));
  // Browsers add a few function-table slots after a restore that Node does not (e.g. Pyodide's JSPI
  // wrappers): the libraries start after a reserved gap, which the browser fills up to the same length.
  if (M.freeTableIndexes.length) throw new Error("the function table has free slots: libraries would not land where recorded");
  const tableBefore = M.wasmTable.length + TABLE_SLACK;
  M.wasmTable.grow(TABLE_SLACK);
  const handles = [];
  for (const path of libs) {
    const handle = M._calloc(1, 32); // emscripten's struct dso fields at +8 … +28; kept in the heap
    await M.loadDynamicLibrary(path, { loadAsync: true, nodelete: true, allowUndefined: true, global: false, fs: M.FS }, {}, handle);
    M.LDSO.loadedLibsByName[path.slice(path.lastIndexOf("/") + 1)] = M.LDSO.loadedLibsByName[path];
    handles.push([path, handle]);
  }
  const tableAfter = M.wasmTable.length;
  // The cell executor too (the worker writes the same file to the same place and finds it imported).
  py.FS.mkdirTree(courseDir);
  py.FS.writeFile(courseDir + "/course_runtime.py", fs.readFileSync(courseRuntime));
  py.runPython(`
import sys, gc
sys.path.insert(0, ${JSON.stringify(courseDir)})
import course_runtime
finder = sys.path_importer_cache.get(${JSON.stringify(sitePackages.replace(/\/$/, ""))})
if finder is not None: finder.invalidate_caches()
for name in ${JSON.stringify(warm)}.split(","):
    try:
        __import__(name.strip())
    except ImportError:
        pass  # e.g. platform-specific helpers; reported when a cell imports them
del finder, name
# the modules' files (.pyc) the heap already holds, loaded: the boot bundle leaves their bytes out (prepare.py)
_course_imported = "\\n".join(sorted({getattr(m, "__file__", None) or "" for m in list(sys.modules.values())} - {""}))
`);
  const imported = py.globals.get("_course_imported").split("\n");
  py.runPython("del _course_imported\nimport gc\ngc.collect()");
  if (M.wasmTable.length !== tableAfter) throw new Error("the imports grew the function table: the browser could not rebuild it");
  const ours = new Set(handles.map(([, h]) => h));
  const got = gotDigest(M.GOT);
  const byHandle = Object.entries(M.LDSO.loadedLibsByHandle)
    .filter(([h]) => !ours.has(Number(h))).map(([h, dso]) => [Number(h), dso.name]);
  zeroFreeMemory(M);
  fs.writeFileSync(out + ".raw", py.makeMemorySnapshot());
  fs.writeFileSync(out + ".json", JSON.stringify({ libs: handles, tableBefore, tableAfter, byHandle, got,
    memoryBase: M.___memory_base.value, imported }));
})().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
