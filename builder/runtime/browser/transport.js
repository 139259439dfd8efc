// The one shipped form of the runtime's assets (builder/runtime/wrappers.py): every asset is a list of classic
// scripts `<name>.<i>.js`, each registering ≤ 512 KiB of the asset's payload (its bytes, or their Zstandard frame
// when the index entry says `encoding: "zstd"`) as a base-85 string literal (RFC 1924 alphabet: plain ASCII, no
// quote, backslash or line break, so Chromium parses these scripts off the main thread).
//
//   file://: the page loads the scripts with <script src> and decodes each literal (`literalInto`);
//   http:    the workers fetch the very same files and decode the literal out of their bytes
//            (`fetchPayload`), so no asset is shipped twice.
// Either way the payload is checked against the runtime index's sha256 before it is inflated or used.
// Shared by runtime.js (page), worker.js and unpacker.js.

import { checkSha256 } from "./verify.js";
import { unzstd } from "./zstd.js";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
const VALUE = new Uint8Array(256).fill(255);
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i;
const QUOTE = 0x22;

// One decoder per source type (string: file://, bytes: http), each kept monomorphic for V8.
function badChar() { return new Error("not base-85 text in a runtime wrapper script"); }

/** Base-85 `text` (a string) → bytes written into `target` at `offset`; returns the byte count. */
export function literalInto(target, offset, text) {
  const n = text.length;
  const full = n - (n % 5);
  const count = (full / 5) * 4 + (n % 5 ? (n % 5) - 1 : 0);
  if (n % 5 === 1 || offset + count > target.length) throw new Error("wrapper chunk does not fit its asset");
  let at = offset;
  let bad = 0;
  for (let i = 0; i < full; i += 5) {
    const a = VALUE[text.charCodeAt(i) & 0xff], b = VALUE[text.charCodeAt(i + 1) & 0xff], c = VALUE[text.charCodeAt(i + 2) & 0xff],
      d = VALUE[text.charCodeAt(i + 3) & 0xff], e = VALUE[text.charCodeAt(i + 4) & 0xff];
    bad |= a | b | c | d | e;
    const v = (((a * 85 + b) * 85 + c) * 85 + d) * 85 + e;
    if (v > 0xffffffff) throw new Error("base-85 group out of range in a runtime wrapper script");
    target[at] = v >>> 24; target[at + 1] = v >>> 16; target[at + 2] = v >>> 8; target[at + 3] = v;
    at += 4;
  }
  if (bad & 0x80) throw badChar(); // 255 marks a character outside the alphabet (all values < 85 < 128)
  return tail(target, at, full, n, (i) => text.charCodeAt(i) & 0xff) - offset;
}

/** The same for base-85 bytes `src[start, end)` (a fetched script). */
function bytesInto(target, offset, src, start, end) {
  const n = end - start;
  const full = start + n - (n % 5);
  const count = ((full - start) / 5) * 4 + (n % 5 ? (n % 5) - 1 : 0);
  if (n % 5 === 1 || offset + count > target.length) throw new Error("wrapper chunk does not fit its asset");
  let at = offset;
  let bad = 0;
  for (let i = start; i < full; i += 5) {
    const a = VALUE[src[i]], b = VALUE[src[i + 1]], c = VALUE[src[i + 2]], d = VALUE[src[i + 3]], e = VALUE[src[i + 4]];
    bad |= a | b | c | d | e;
    const v = (((a * 85 + b) * 85 + c) * 85 + d) * 85 + e;
    if (v > 0xffffffff) throw new Error("base-85 group out of range in a runtime wrapper script");
    target[at] = v >>> 24; target[at + 1] = v >>> 16; target[at + 2] = v >>> 8; target[at + 3] = v;
    at += 4;
  }
  if (bad & 0x80) throw badChar();
  return tail(target, at, full, end, (i) => src[i]) - offset;
}

/** The last group of k < 5 characters: padded with the highest digit, k - 1 bytes. */
function tail(target, at, from, to, charAt) {
  const k = to - from;
  if (!k) return at;
  let v = 0;
  for (let j = 0; j < 5; j++) {
    const x = j < k ? VALUE[charAt(from + j)] : 84;
    if (x === 255) throw badChar();
    v = v * 85 + x;
  }
  for (let j = 0; j < k - 1; j++) target[at++] = (v >>> (24 - 8 * j)) & 0xff;
  return at;
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
  return bytesInto(target, offset, script, start, end);
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

/** A verified payload → the asset's bytes (inflated when the index says so). */
export async function decodePayload(asset, payload) {
  if (!asset.encoding) return payload;
  if (asset.encoding !== "zstd") throw new Error(`${asset.name}: unknown encoding ${asset.encoding}`);
  const bytes = await unzstd(payload, asset.decodedSize);
  if (asset.decodedSize != null && bytes.length !== asset.decodedSize) {
    throw new Error(`${asset.name}: ${bytes.length} bytes after inflating, expected ${asset.decodedSize}`);
  }
  return bytes;
}

/** The runtime-index fields the workers need of one asset. */
export function assetRecord(a) {
  return { name: a.name, size: a.size, sha256: a.sha256, encoding: a.encoding || null,
    decodedSize: a.decodedSize ?? a.size, wrappers: a.wrappers, wrapperSize: a.wrapperSize, lazy: !!a.lazy,
    ...(a.parts ? { parts: a.parts } : {}) };
}
