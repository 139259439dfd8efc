// Unpacker worker (bundled to a string and started from a blob: URL by runtime.js, next to each Python
// worker).  It turns the compressed assets of a boot — the main wasm, the interpreter's memory snapshot and the
// wheel packs (builder/runtime/: snapshot.pack_snapshot, wheels.wheel_pack), and optional packs the page wants
// early — into verified, inflated bytes and hands them to its Python worker over a MessagePort, while that
// worker evaluates pyodide.asm.js and instantiates the wasm.
//
// Why a second worker started by the page, not by the Python worker: inflating the boot bundle (~38 MB) takes a
// few hundred ms on a slow core, and the Python worker's thread is busy for ~0.3 s in the synchronous importScripts of
// pyodide.asm.js — a worker it started would not even begin loading until that is over.
//
// Messages from the page:
//   {type: "init", port, mode, indexURL, chunkBytes, jobs: [{name, kind: "snapshot" | "pack" | "bundle", sha256,
//     size, encoding, wrappers, parts?, extra?}], keep: [{name, sha256}]}  (a bundle: the stdlib zip, the snapshot and the
//     packs in one frame, `parts` each's {name, kind, offset, size} in it; each part goes to the port under its own
//     name; `extra`: not the boot's own — downloaded after it, not counted in its progress; `keep`: assets of this site whose
//     stored bytes stay besides the jobs', e.g. optional packs)
//     http: the unpacker fetches each job's wrapper scripts itself (transport.js);
//     file: the page posts {type: "asset", name, buffer} (the payload read from the wrapper scripts).
// To the page: {type: "bytes", n} (download progress, http).
// To the port:  {name, buffer} (inflated; the snapshot expanded to the full heap) or {name, error}.
//
// From the port: {type: "store"} (http): the Python worker is up; keep this boot's inflated bytes.
//
// Over http the inflated bytes are kept in the origin's Cache Storage, keyed by the compressed payload's sha256: a
// returning reader's boot reads ~38 MB from disk instead of fetching, hashing and inflating ~6 MB of zstd
// again (~0.4 s of CPU here, while a boot keeps both cores busy).  They are written once the Python worker
// says it is up: writing them during the boot competed with it for CPU (+0.25 s here).  Only bytes that
// matched the runtime index are ever stored, under the hash they matched; only same-origin script can
// write there, and such script could change the page anyway.

import { checkSha256 } from "./verify.js";
import { decodePayload, fetchPayload } from "./transport.js";
import { zstdReady } from "./zstd.js";

let port = null;
const waiting = new Map(); // file mode: name -> resolve(bytes)
const posted = new Map();  // file mode: assets that came before their job asked for them


/** The sparse snapshot (builder/runtime/snapshot.py, pack_snapshot) → the full heap image Pyodide restores. */
function expandSnapshot(raw) {
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (raw.length < 12 || dv.getUint32(0, true) !== 0x314e5343) throw new Error("memory snapshot: bad magic"); // "CSN1"
  const size = dv.getUint32(4, true);
  const count = dv.getUint32(8, true);
  const PAGE = 4096;
  const heap = new Uint8Array(size);
  let off = 12 + 4 * count;
  for (let k = 0; k < count; k++) {
    const at = dv.getUint32(12 + 4 * k, true) * PAGE;
    const len = Math.min(PAGE, size - at);
    if (len <= 0 || off + len > raw.length) throw new Error("memory snapshot: truncated");
    heap.set(raw.subarray(off, off + len), at);
    off += len;
  }
  if (off !== raw.length) throw new Error("memory snapshot: stray bytes");
  return heap;
}

function postedBytes(name) {
  if (posted.has(name)) {
    const bytes = posted.get(name);
    posted.delete(name);
    return Promise.resolve(bytes);
  }
  return new Promise((resolve) => waiting.set(name, resolve));
}

// ------------------------------------------------------------------------------ inflated-bytes cache
const INFLATED_CACHE = "course-python-inflated";

async function openInflatedCache() {
  try {
    return self.caches ? await self.caches.open(INFLATED_CACHE) : null; // missing outside secure contexts
  } catch {
    return null; // e.g. storage disabled
  }
}

function inflatedKey(indexURL, job) {
  return `${indexURL}${job.name}?inflated=${job.sha256}`;
}

async function cachedInflated(cache, key) {
  try {
    const hit = cache && await cache.match(key);
    return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
  } catch {
    return null;
  }
}

let storeAllowed = null; // called on {type: "store"}
const whenStoreAllowed = new Promise((resolve) => { storeAllowed = resolve; });

/** Store this boot's freshly inflated bytes ([key, bytes] pairs), then drop what older builds of this site
 *  stored: entries under the same indexURL that are not among this index's `keep` keys (other sites on the
 *  origin keep theirs). */
async function storeInflated(cache, indexURL, toStore, keep) {
  try {
    for (const [key, bytes] of toStore) await cache.put(key, new Response(bytes));
    for (const req of await cache.keys()) {
      if (req.url.startsWith(indexURL) && !keep.has(req.url) && req.url.includes("?inflated=")) await cache.delete(req);
    }
  } catch { /* best effort: quota, storage disabled */ }
}

// ------------------------------------------------------------------------------------------- jobs
async function unpack(msg, job, payload, cached) {
  const hit = await cached;
  let raw = hit;
  if (hit) {
    if (!job.extra) self.postMessage({ type: "bytes", n: job.wrapperSize || job.size }); // progress: this asset is here
  } else {
    let bytes;
    if (msg.mode === "http") bytes = await payload;
    else {
      bytes = await postedBytes(job.name);
      await checkSha256(job.name, bytes, job.sha256);
    }
    raw = await decodePayload(job, bytes); // the transport's encoding (zstd)
  }
  return { raw, fresh: !hit, outs: partsOf(job, raw) };
}

/** A job's inflated bytes → [name, bytes] for the Python worker: the boot bundle's parts (builder/runtime/
 *  prepare.py, boot_bundle), or the one asset; a snapshot expanded to the full heap. */
function partsOf(job, raw) {
  const parts = job.kind === "bundle" ? job.parts : [{ name: job.name, kind: job.kind, offset: 0, size: raw.length }];
  let end = 0;
  const outs = parts.map((p) => {
    if (p.offset !== end || p.offset + p.size > raw.length) throw new Error(`${job.name}: part ${p.name} out of place`);
    end = p.offset + p.size;
    const bytes = raw.subarray(p.offset, end);
    // each part moves to the Python worker in a buffer of its own: a bundle's parts are copied out of it
    return [p.name, p.kind === "snapshot" ? expandSnapshot(bytes) : parts.length > 1 ? bytes.slice() : bytes];
  });
  if (end !== raw.length) throw new Error(`${job.name}: ${raw.length - end} stray bytes`);
  return outs;
}

async function init(msg) {
  port = msg.port;
  port.onmessage = ({ data }) => { if (data.type === "store") storeAllowed(); };
  const cache = msg.mode === "http" ? await openInflatedCache() : null;
  const toStore = [];
  // One job at a time, in order (the snapshot first: the Python worker needs it first); over http all the
  // downloads of assets not in the cache still start at once.
  let previous = Promise.resolve();
  // Jobs beyond the boot's own (`extra`: the optional packs runtime.js adds) start downloading only
  // once the boot's downloads are done: on a slow link they would otherwise take bandwidth from the boot.
  const bootDownloads = [];
  const turns = msg.jobs.map((job) => {
    const key = inflatedKey(msg.indexURL, job);
    const cached = cachedInflated(cache, key);
    const extra = !!job.extra;
    const download = () => fetchPayload(msg.indexURL, job, msg.chunkBytes, (n) => { if (!extra) self.postMessage({ type: "bytes", n }); });
    const payload = msg.mode !== "http" ? null : extra
      ? Promise.allSettled(bootDownloads).then(() => cached).then((hit) => (hit ? null : download()))
      : cached.then((hit) => (hit ? null : download()));
    if (payload) payload.catch(() => {});
    if (payload && !extra) bootDownloads.push(payload);
    const turn = previous.then(() => unpack(msg, job, payload, cached));
    previous = turn.catch(() => {});
    return turn.then(({ raw, fresh, outs }) => {
      // a Blob holds its own copy (an `out` may be `raw`, whose buffer moves to the Python worker below), and
      // the browser stores it without streaming it through this thread again
      if (cache && fresh) toStore.push([key, new Blob([raw])]);
      for (const [name, out] of outs) port.postMessage({ name, buffer: out.buffer }, [out.buffer]);
    }, (e) => {
      for (const name of [job.name, ...(job.parts || []).map((p) => p.name)]) {
        port.postMessage({ name, error: String(e && e.message || e) });
      }
    });
  });
  await Promise.all(turns);
  if (toStore.length) {
    await whenStoreAllowed;
    await storeInflated(cache, msg.indexURL, toStore, new Set([...msg.jobs, ...(msg.keep || [])].map((job) => inflatedKey(msg.indexURL, job))));
  }
  self.close();
}

self.onmessage = ({ data }) => {
  if (data.type === "init") { zstdReady().catch(() => {}); init(data); } // the decoder compiles while the bytes come
  else if (data.type === "asset") {
    const bytes = new Uint8Array(data.buffer);
    const resolve = waiting.get(data.name);
    if (resolve) { waiting.delete(data.name); resolve(bytes); } else posted.set(data.name, bytes);
  }
};
