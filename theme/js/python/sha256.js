// SHA-256 checks shared by worker.js, unpacker.js and snapshot_libs.js (WebCrypto).

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
