// Reading and checking downloaded bytes, shared by worker.js, unpacker.js and snapshot_libs.js.

/** SHA-256 of `bytes` as lowercase hex. */
export async function sha256Hex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Throws unless `bytes` hash to `expected`.  Skipped where WebCrypto is missing: not a secure context
 *  (plain http on a remote host), where the page could not be trusted to check anything anyway. */
export async function checkSha256(name, bytes, expected) {
  if (!(globalThis.crypto && crypto.subtle)) return;
  const actual = await sha256Hex(bytes);
  if (actual !== expected) throw new Error(`${name}: sha256 ${actual}, expected ${expected}`);
}

/** A response body read to the end into one buffer (allocated once from `sizeHint`, the indexed size),
 *  calling `onChunk(n)` as bytes arrive (download progress). */
export async function readBody(body, sizeHint, onChunk) {
  let bytes = new Uint8Array(sizeHint);
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > bytes.length) { // bigger than indexed: keep reading, the hash will say why
      const grown = new Uint8Array(Math.max(bytes.length * 2, size + value.length));
      grown.set(bytes.subarray(0, size));
      bytes = grown;
    }
    bytes.set(value, size);
    size += value.length;
    onChunk(value.length);
  }
  return size === bytes.length ? bytes : bytes.slice(0, size);
}
