// Relinking NumPy's extension modules after restoring a memory snapshot that has NumPy imported (the
// snapshot is made by builder/runtime/snapshot.py, memory_snapshot, which explains the scheme).  Used by
// worker.js; tests/unit/test_pyodide_assets.py runs it under Node against a real snapshot.
//
// `M` is Pyodide's Emscripten module (pyodide._module), `dynlibs` the runtime index's record
// {libs: [[path, handle]], tableBefore, tableAfter, got, byHandle}, `snapshot` the restored image.

import { sha256Hex } from "./verify.js";

/** The snapshot was made with NumPy imported (builder/runtime/snapshot.py, memory_snapshot): instantiate its
 *  extension modules again at the memory and table addresses they had, recorded in the heap at `handle`,
 *  then put back their static data as the snapshot has it (instantiating re-initialises it). */
export async function relinkSnapshotLibraries(M, dynlibs, snapshot) {
  const mismatch = (what, got, want) => new Error(
    `memory snapshot: ${what} is ${got}, expected ${want} (the snapshot does not fit this Pyodide)`);
  // The libraries start at a recorded table length; this browser may have added a few slots since the
  // restore (the build left a gap for them): fill up to it, and append (not reuse freed slots) like the build.
  if (M.wasmTable.length > dynlibs.tableBefore) throw mismatch("the function table", M.wasmTable.length, dynlibs.tableBefore);
  M.wasmTable.grow(dynlibs.tableBefore - M.wasmTable.length);
  const freed = M.freeTableIndexes.splice(0);
  try {
    for (const [path, handle] of dynlibs.libs) {
      await M.loadDynamicLibrary(path, { loadAsync: true, nodelete: true, allowUndefined: true, global: false, fs: M.FS }, {}, handle);
      M.LDSO.loadedLibsByName[path.slice(path.lastIndexOf("/") + 1)] = M.LDSO.loadedLibsByName[path];
    }
  } finally {
    M.freeTableIndexes.push(...freed);
  }
  if (M.wasmTable.length !== dynlibs.tableAfter) throw mismatch("the function table", M.wasmTable.length, dynlibs.tableAfter);
  if (globalThis.crypto && crypto.subtle) {
    const text = Object.keys(M.GOT).sort().map((k) => `${k}=${M.GOT[k].value}`).join("\n");
    const got = await sha256Hex(new TextEncoder().encode(text));
    if (got !== dynlibs.got) throw mismatch("the global offset table", got.slice(0, 12), dynlibs.got.slice(0, 12));
  }
  const heap = snapshot.subarray(new Uint32Array(snapshot.buffer, snapshot.byteOffset, 2)[1]); // after Pyodide's header
  for (const [, handle] of dynlibs.libs) {
    const base = M.HEAPU32[(handle + 12) >> 2];
    const size = M.HEAP32[(handle + 16) >> 2];
    M.HEAP8.set(heap.subarray(base, base + size), base);
  }
  for (const [handle, name] of dynlibs.byHandle) {
    if (M.LDSO.loadedLibsByName[name]) M.LDSO.loadedLibsByHandle[handle] = M.LDSO.loadedLibsByName[name];
  }
}
