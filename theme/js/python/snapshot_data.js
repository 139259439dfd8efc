// The memory snapshot ships with the interpreter's static data XORed out (builder/runtime/snapshot.py,
// xor_data_segment): what the main wasm module's one data segment puts in memory is zeros in the snapshot wherever
// the interpreter left it unchanged. The worker XORs it back in before Pyodide restores the heap.

function leb(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) return [value, at];
  }
}

/** pyodide.asm.wasm's bytes → its one active data segment (a view, no copy). */
export function wasmDataSegment(wasm) {
  let at = 8;
  while (at < wasm.length) {
    const section = wasm[at];
    const [size, start] = leb(wasm, at + 1);
    if (section === 11) {
      let [count, j] = leb(wasm, start);
      let flag;
      [flag, j] = leb(wasm, j);
      const end = wasm.indexOf(0x0b, j); // the offset expression (global.get $__memory_base) ends here
      if (count !== 1 || flag !== 0 || end < 0 || end - j > 8) throw new Error("memory snapshot: pyodide.asm.wasm has not one data segment");
      const [length, data] = leb(wasm, end + 1);
      return wasm.subarray(data, data + length);
    }
    at = start + size;
  }
  throw new Error("memory snapshot: pyodide.asm.wasm has no data section");
}

/** XOR `segment` into `snapshot` at `xor.at` (the index's `snapshot.dataXor`: {at, size}). */
export function restoreDataSegment(snapshot, segment, xor) {
  if (segment.length !== xor.size || xor.at + xor.size > snapshot.length) {
    throw new Error(`memory snapshot: a data segment of ${segment.length} bytes, expected ${xor.size}`);
  }
  const target = snapshot.subarray(xor.at, xor.at + xor.size);
  for (let i = 0; i < target.length; i++) target[i] ^= segment[i];
}
