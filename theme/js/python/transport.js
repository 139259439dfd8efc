// The one shipped form of the runtime's assets (builder/runtime/wrappers.py): every asset is a list of classic
// scripts `<name>.<i>.js`, each registering ≤ 512 KiB of the asset's payload (its bytes, or their gzip when
// the index entry says `encoding: "gzip"`) as a string literal whose characters are the payload bytes
// (decoded as x-user-defined: byte b is U+00bb below 0x80, U+F700+b above; four bytes are escaped).
//
//   file://: the page loads the scripts with <script charset="x-user-defined"> and turns each literal into
//            bytes (`literalInto`);
//   http:    the workers fetch the very same files and read the literal out of their bytes (`fetchPayload`),
//            so no asset is shipped twice.
// Either way the payload is checked against the runtime index's sha256 before it is inflated or used.
// Shared by runtime.js (page), worker.js and unpacker.js.

import { checkSha256 } from "./verify.js";

const BACKSLASH = 0x5c;
const QUOTE = 0x22;
const UNESCAPE = { 0x5c: 0x5c, 0x22: 0x22, 0x6e: 0x0a, 0x72: 0x0d }; // \\ \" \n \r

/** A wrapper's literal (as the script engine read it, x-user-defined) → its bytes, written into `target`
 *  at `offset`; returns the byte count. */
export function literalInto(target, offset, text) {
  const n = text.length;
  if (offset + n > target.length) throw new Error(`wrapper chunk overflows its asset (${offset + n} > ${target.length})`);
  for (let i = 0; i < n; i++) target[offset + i] = text.charCodeAt(i); // & 0xFF by the Uint8Array store
  return n;
}

/** A wrapper script's raw bytes (http) → its payload bytes, written into `target` at `offset`; returns the
 *  byte count.  The literal runs from after the first `]="` to the last `"` of the file. */
export function wrapperBytesInto(target, offset, script) {
  let start = -1;
  for (let i = 0; i + 2 < script.length && i < 4096; i++) {
    if (script[i] === 0x5d && script[i + 1] === 0x3d && script[i + 2] === QUOTE) { start = i + 3; break; }
  }
  const end = script.lastIndexOf(QUOTE);
  if (start < 0 || end < start) throw new Error("not a runtime wrapper script");
  let at = offset;
  let i = start;
  while (i < end) {
    let j = script.indexOf(BACKSLASH, i);
    if (j < 0 || j >= end) j = end;
    if (at + (j - i) > target.length) throw new Error("wrapper chunk overflows its asset");
    target.set(script.subarray(i, j), at);
    at += j - i;
    if (j === end) break;
    const b = UNESCAPE[script[j + 1]];
    if (b === undefined || at >= target.length) throw new Error("bad escape in a runtime wrapper script");
    target[at++] = b;
    i = j + 2;
  }
  return at - offset;
}

/** http: fetch every wrapper script of `asset` (all at once), decode each into one buffer of the payload's
 *  size and check the payload's sha256.  `onBytes(n)` counts the bytes read (download progress). */
export async function fetchPayload(baseURL, asset, chunkBytes, onBytes, fetchFn = fetch) {
  const payload = new Uint8Array(asset.size);
  const counts = await Promise.all(asset.wrappers.map(async (file, i) => {
    const resp = await fetchFn(baseURL + file);
    if (!resp.ok) throw new Error(`无法加载 ${file}: HTTP ${resp.status}`);
    const script = new Uint8Array(await resp.arrayBuffer());
    if (onBytes) onBytes(script.length);
    try {
      return wrapperBytesInto(payload, i * chunkBytes, script);
    } catch (e) {
      throw new Error(`${asset.name}: ${file}: ${e.message}`);
    }
  }));
  const got = counts.reduce((s, n) => s + n, 0);
  if (got !== asset.size) throw new Error(`${asset.name}: ${got} bytes, expected ${asset.size}`);
  await checkSha256(asset.name, payload, asset.sha256);
  return payload;
}

/** gzip bytes → inflated bytes (native DecompressionStream). */
export async function gunzip(bytes) {
  return new Uint8Array(await new Response(
    new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer());
}

/** A verified payload → the asset's bytes (inflated when the index says so). */
export async function decodePayload(asset, payload) {
  if (asset.encoding !== "gzip") return payload;
  const bytes = await gunzip(payload);
  if (asset.decodedSize != null && bytes.length !== asset.decodedSize) {
    throw new Error(`${asset.name}: ${bytes.length} bytes after inflating, expected ${asset.decodedSize}`);
  }
  return bytes;
}

/** The runtime-index fields the workers need of one asset. */
export function assetRecord(a) {
  return { name: a.name, size: a.size, sha256: a.sha256, encoding: a.encoding || null,
    decodedSize: a.decodedSize ?? a.size, wrappers: a.wrappers, wrapperSize: a.wrapperSize, lazy: !!a.lazy };
}
