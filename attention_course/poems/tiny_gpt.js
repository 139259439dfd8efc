// The tiny Transformer of the Tang poems in the browser: the same forward pass as attention_core/tiny_gpt.py
// (a test holds the two within 1e-4), on the weights of attention_course/poems/weights_format.py, which a page
// embeds as base64 in a classic script (no fetch: pages work from file://).
//
//   const model = decodeWeights(payload);           // payload: {format, config, vocab, layout, data (base64)}
//   const ids = encode("白日依山", model.vocab);      // [0 (◆), …]; characters outside the vocabulary → 1 (□)
//   const out = forward(model, ids);                 // {T, V, logits (T·V, or V with lastOnly), attention}
//   out.attention[layer][head]                       // Float32Array T·T, row i = query i, causal
//   const session = createSession(model);            // typing: one position per keystroke (a KV cache)
//   session.push(id) → {logits (V), attention[layer][head] (the new row)}
//
// Matrices multiply from the right (x · W, W stored row-major as d_in × d_out); head h uses columns
// h·d_head … (h+1)·d_head of wq, wk, wv; pre-norm blocks with RMSNorm, GELU's tanh form, a tied output layer.

const GELU_C = 0.044715;
const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

function base64Bytes(text) {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// The float32 arrays of every tensor, dequantised as weights_format.unpack does. (Every float32 section of the blob
// starts at a multiple of 4 and every float16 one at a multiple of 2, so on little-endian machines — all browsers'
// — typed-array views read them directly; DataView elsewhere.)
export function decodeWeights(payload) {
  const bytes = base64Bytes(payload.data);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const f32 = (offset, n) => {
    if (LITTLE_ENDIAN) return new Float32Array(bytes.buffer, bytes.byteOffset + offset, n);
    return Float32Array.from({ length: n }, (_, i) => view.getFloat32(offset + 4 * i, true));
  };
  const params = {};
  for (const e of payload.layout) {
    const n = e.shape.reduce((a, b) => a * b, 1);
    let a;
    if (e.encoding === "float32") {
      a = Float32Array.from(f32(e.offset, n));
    } else if (e.encoding === "float16") {
      a = new Float32Array(n);
      for (let i = 0; i < n; i++) a[i] = halfToFloat(view.getUint16(e.offset + 2 * i, true));
    } else if (e.encoding === "int8-rows") {
      const rows = e.shape[0];
      const cols = n / rows;
      const q = new Int8Array(bytes.buffer, bytes.byteOffset + e.offset, n);
      const scales = f32(e.scales, rows);
      a = new Float32Array(n);
      for (let r = 0; r < rows; r++) {
        const scale = scales[r];
        for (let c = r * cols, end = c + cols; c < end; c++) a[c] = q[c] * scale;
      }
    } else {
      throw new Error(`${e.name}: unknown encoding ${e.encoding}`);
    }
    params[e.name] = a;
  }
  return { config: payload.config, vocab: Array.from(payload.vocab), params };
}

// ◆ then each character's id (1 = □ for characters outside the vocabulary); code points, not UTF-16 units.
export function encode(text, vocab) {
  const index = new Map(vocab.map((ch, i) => [ch, i]));
  return [0, ...Array.from(text, (ch) => index.get(ch) ?? 1)];
}

// out (m) = x (n) · w (n × m), row-major; accumulated in doubles, four rows of w per pass (fewer stores: 1.5×
// faster in V8 than one row per pass).
function matvec(x, w, n, m) {
  const out = new Float64Array(m);
  let k = 0;
  for (; k + 3 < n; k += 4) {
    const x0 = x[k];
    const x1 = x[k + 1];
    const x2 = x[k + 2];
    const x3 = x[k + 3];
    const r0 = k * m;
    const r1 = r0 + m;
    const r2 = r1 + m;
    const r3 = r2 + m;
    for (let j = 0; j < m; j++) out[j] += x0 * w[r0 + j] + x1 * w[r1 + j] + x2 * w[r2 + j] + x3 * w[r3 + j];
  }
  for (; k < n; k++) {
    const v = x[k];
    const r = k * m;
    for (let j = 0; j < m; j++) out[j] += v * w[r + j];
  }
  return out;
}

function rmsNorm(x, gain, d, eps) {
  let ss = 0;
  for (let j = 0; j < d; j++) ss += x[j] * x[j];
  const r = 1 / Math.sqrt(ss / d + eps);
  const out = new Float64Array(d);
  for (let j = 0; j < d; j++) out[j] = x[j] * r * gain[j];
  return out;
}

// A running forward pass that keeps every layer's keys and values (a KV cache): `push(id)` runs one new position
// and returns its logits (unless {logits: false}) and its row of attention weights in every layer and head. The
// rows of earlier positions never change (the mask is causal), so a keystroke costs one position, not the whole
// context; `truncate(n)` forgets positions n … (an edit), `ids` is what the session holds.
export function createSession(model) {
  const { config: c, params: p } = model;
  const d = c.d_model;
  const H = c.n_heads;
  const dh = d / H;
  const f = c.d_ff;
  const V = c.vocab_size;
  const scale = 1 / Math.sqrt(dh);
  const keys = Array.from({ length: c.n_layers }, () => new Float32Array(c.context * d));
  const values = Array.from({ length: c.n_layers }, () => new Float32Array(c.context * d));
  const ids = [];
  function push(id, { logits: wantLogits = true } = {}) {
    const t = ids.length;
    if (t >= c.context) throw new Error(`the context holds ${c.context} ids`);
    if (!(id >= 0 && id < V)) throw new Error(`id ${id} outside the vocabulary`);
    ids.push(id);
    const x = new Float64Array(d);
    for (let j = 0; j < d; j++) x[j] = p.tok[id * d + j] + p.pos[t * d + j];
    const attention = [];
    for (let l = 0; l < c.n_layers; l++) {
      const L = `l${l}.`;
      const a = rmsNorm(x, p[L + "norm1"], d, c.eps);
      const q = matvec(a, p[L + "wq"], d, d);
      keys[l].set(matvec(a, p[L + "wk"], d, d), t * d);
      values[l].set(matvec(a, p[L + "wv"], d, d), t * d);
      const K = keys[l];
      const Vs = values[l];
      const concat = new Float64Array(d);
      const rows = [];
      for (let h = 0; h < H; h++) {
        const o = h * dh;
        const row = new Float64Array(t + 1);
        let max = -Infinity;
        for (let j = 0; j <= t; j++) {
          let s = 0;
          for (let u = 0; u < dh; u++) s += q[o + u] * K[j * d + o + u];
          row[j] = s * scale;
          if (row[j] > max) max = row[j];
        }
        let sum = 0;
        for (let j = 0; j <= t; j++) sum += row[j] = Math.exp(row[j] - max);
        for (let j = 0; j <= t; j++) {
          const w = (row[j] /= sum);
          for (let u = 0; u < dh; u++) concat[o + u] += w * Vs[j * d + o + u];
        }
        rows.push(Float32Array.from(row));
      }
      attention.push(rows);
      const attnOut = matvec(concat, p[L + "wo"], d, d);
      for (let j = 0; j < d; j++) x[j] += attnOut[j];
      const hidden = matvec(rmsNorm(x, p[L + "norm2"], d, c.eps), p[L + "w1"], d, f);
      const b1 = p[L + "b1"];
      for (let j = 0; j < f; j++) {
        const z = hidden[j] + b1[j];
        hidden[j] = 0.5 * z * (1 + Math.tanh(SQRT_2_OVER_PI * z * (1 + GELU_C * z * z)));
      }
      const ffnOut = matvec(hidden, p[L + "w2"], f, d);
      const b2 = p[L + "b2"];
      for (let j = 0; j < d; j++) x[j] += ffnOut[j] + b2[j];
    }
    let logits = null;
    if (wantLogits) {
      const final = rmsNorm(x, p.norm_f, d, c.eps);
      logits = new Float32Array(V);
      const tok = p.tok;
      const bias = p.out_bias;
      for (let v = 0; v < V; v++) {
        const r = v * d;
        let s0 = 0;
        let s1 = 0;
        let s2 = 0;
        let s3 = 0;
        let j = 0;
        for (; j + 3 < d; j += 4) {
          s0 += final[j] * tok[r + j];
          s1 += final[j + 1] * tok[r + j + 1];
          s2 += final[j + 2] * tok[r + j + 2];
          s3 += final[j + 3] * tok[r + j + 3];
        }
        for (; j < d; j++) s0 += final[j] * tok[r + j];
        logits[v] = bias[v] + (s0 + s1 + s2 + s3);
      }
    }
    return { logits, attention };
  }
  function truncate(n) {
    ids.length = Math.min(ids.length, Math.max(0, n));
  }
  return { ids, push, truncate, reset: () => truncate(0) };
}

// Logits of every position (or of the last one only, with lastOnly: then `logits` has V entries) and every layer's
// and head's attention weights as T × T matrices (attention[layer][head], row-major, zeros above the diagonal).
export function forward(model, ids, { lastOnly = false } = {}) {
  const c = model.config;
  const T = ids.length;
  const V = c.vocab_size;
  if (T < 1 || T > c.context) throw new Error(`need 1 … ${c.context} ids, got ${T}`);
  const session = createSession(model);
  const logits = new Float32Array((lastOnly ? 1 : T) * V);
  const attention = Array.from({ length: c.n_layers }, () =>
    Array.from({ length: c.n_heads }, () => new Float32Array(T * T)),
  );
  for (let i = 0; i < T; i++) {
    const want = !lastOnly || i === T - 1;
    const step = session.push(ids[i], { logits: want });
    if (want) logits.set(step.logits, lastOnly ? 0 : i * V);
    step.attention.forEach((rows, l) => rows.forEach((row, h) => attention[l][h].set(row, i * T)));
  }
  return { T, V, logits, attention };
}

// P(next character) at the last position: softmax(logits / temperature).
export function nextProbs(model, ids, temperature = 1) {
  const { logits, V } = forward(model, ids.slice(-model.config.context), { lastOnly: true });
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, logits[i] / temperature);
  const p = new Float64Array(V);
  let sum = 0;
  for (let i = 0; i < V; i++) sum += p[i] = Math.exp(logits[i] / temperature - max);
  for (let i = 0; i < V; i++) p[i] /= sum;
  return p;
}
