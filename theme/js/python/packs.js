// Wheel packs (builder/runtime/wheels.py, wheel_pack: `CPK1`, uint32 LE header length, JSON header
// {"files": [[path, size], ...]}, then the files back to back), installed into Pyodide's site-packages.
// Shared by worker.js (the browser) and the build's memory snapshot under Node (_SNAPSHOT_JS), so that both
// write exactly the same files.

export const SITE_PACKAGES = "/lib/python3.12/site-packages";
const SHARED_LIB = /\.cpython-[^/]*\.so$|\.abi3\.so$/;

/** Write the inflated pack `raw` into site-packages through Emscripten's `FS`; returns the paths of its
 *  Python extension modules (.so). */
export function installPack(FS, packName, raw) {
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (raw.length < 8 || String.fromCharCode(...raw.subarray(0, 4)) !== "CPK1") throw new Error(`${packName}: not a wheel pack`);
  const headerLen = dv.getUint32(4, true);
  const { files } = JSON.parse(new TextDecoder().decode(raw.subarray(8, 8 + headerLen)));
  let off = 8 + headerLen;
  const made = new Set();
  const sharedLibs = [];
  for (const [name, size] of files) {
    if (name.startsWith("/") || name.split("/").includes("..")) throw new Error(`${packName}: bad path ${name}`);
    const path = `${SITE_PACKAGES}/${name}`;
    const dir = path.slice(0, path.lastIndexOf("/"));
    if (!made.has(dir)) { FS.mkdirTree(dir); made.add(dir); }
    FS.writeFile(path, raw.subarray(off, off + size), { canOwn: true }); // MEMFS keeps the view: no copy
    off += size;
    if (SHARED_LIB.test(name)) sharedLibs.push(path);
  }
  if (off !== raw.length) throw new Error(`${packName}: ${raw.length - off} stray bytes`);
  return sharedLibs;
}
