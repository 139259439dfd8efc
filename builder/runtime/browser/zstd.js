// Zstandard frames → bytes, for the runtime's assets (builder/runtime/wrappers.py compresses them at level 19).
// The decoder is npm zstddec: zstd's own decompressor compiled to WebAssembly (~50 KB), about as fast as the native
// gzip DecompressionStream. Its init() compiles the module from a data: URL with fetch(), so a worker calls
// zstdReady() before it locks fetch down (worker.js, installNetworkGuards).
import { ZSTDDecoder } from "zstddec";

const decoder = new ZSTDDecoder();
let ready = null;

export function zstdReady() {
  return ready || (ready = decoder.init());
}

/** One Zstandard frame → its `size` bytes (a fresh Uint8Array). */
export async function unzstd(frame, size) {
  await zstdReady();
  return decoder.decode(frame, size);
}
