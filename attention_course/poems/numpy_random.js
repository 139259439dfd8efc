// NumPy's random generator in the browser, bit for bit: `defaultRng(seed)` is `numpy.random.default_rng(seed)`
// (a SeedSequence feeding PCG64), `random()` its `Generator.random()` and `choice(p)` its
// `Generator.choice(len(p), p=p)` — so the poem-writer widget draws a continuation exactly as the build's sampler
// (transformer_lm.sample) does: the same seed, temperature and text give the same poem here as in Python (up to the
// last bits of the probabilities, which the two forward passes compute within 1e-4 of each other). A Node test
// (tests/course/poems/test_numpy_random_js.py) holds the streams equal to NumPy's.
//
// 128-bit PCG arithmetic with BigInt: a draw costs microseconds, nothing beside a forward pass.

const M32 = 0xffffffffn;
const M64 = (1n << 64n) - 1n;
const M128 = (1n << 128n) - 1n;

// numpy/random/bit_generator.pyx (SeedSequence): pool of 4 uint32 words, hashmix / mix constants.
const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const POOL_SIZE = 4;

const u32 = (x) => x >>> 0;
const mul32 = (a, b) => Math.imul(a, b) >>> 0;

/** The entropy of an integer seed as uint32 words, least significant first (SeedSequence's coercion). */
function entropyWords(seed) {
  let s = BigInt(seed);
  if (s < 0n) throw new Error("the seed must be a non-negative integer");
  const words = [];
  do {
    words.push(Number(s & M32));
    s >>= 32n;
  } while (s > 0n);
  return words;
}

function seedPool(seed) {
  const entropy = entropyWords(seed);
  let hashConst = INIT_A;
  const hashmix = (value) => {
    let v = u32(value ^ hashConst);
    hashConst = mul32(hashConst, MULT_A);
    v = mul32(v, hashConst);
    return u32(v ^ (v >>> 16));
  };
  const mix = (x, y) => {
    const r = u32(mul32(MIX_MULT_L, x) - mul32(MIX_MULT_R, y));
    return u32(r ^ (r >>> 16));
  };
  const pool = [];
  for (let i = 0; i < POOL_SIZE; i++) pool.push(hashmix(i < entropy.length ? entropy[i] : 0));
  for (let src = 0; src < POOL_SIZE; src++) {
    for (let dst = 0; dst < POOL_SIZE; dst++) {
      if (src !== dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
    }
  }
  for (let src = POOL_SIZE; src < entropy.length; src++) {
    for (let dst = 0; dst < POOL_SIZE; dst++) pool[dst] = mix(pool[dst], hashmix(entropy[src]));
  }
  return pool;
}

/** SeedSequence.generate_state(n, np.uint64): n uint64 words (as BigInt). */
function generateState(pool, n) {
  let hashConst = INIT_B;
  const words = [];
  for (let i = 0; i < 2 * n; i++) {
    let v = u32(pool[i % POOL_SIZE] ^ hashConst);
    hashConst = mul32(hashConst, MULT_B);
    v = mul32(v, hashConst);
    words.push(u32(v ^ (v >>> 16)));
  }
  const out = [];
  for (let i = 0; i < n; i++) out.push(BigInt(words[2 * i]) | (BigInt(words[2 * i + 1]) << 32n)); // little-endian pairs
  return out;
}

const PCG_MULT = (2549297995355413924n << 64n) | 4865540595714422341n;

/** numpy.random.default_rng(seed): {random(), choice(p), state()}. */
export function defaultRng(seed) {
  const [s0, s1, i0, i1] = generateState(seedPool(seed), 4);
  const inc = ((((i0 << 64n) | i1) << 1n) | 1n) & M128;
  let state = 0n;
  const step = () => { state = (state * PCG_MULT + inc) & M128; };
  step();
  state = (state + ((s0 << 64n) | s1)) & M128;
  step();
  function nextUint64() {
    step();
    const rot = Number(state >> 122n);
    const x = ((state >> 64n) ^ state) & M64;
    return ((x >> BigInt(rot)) | (x << BigInt((64 - rot) & 63))) & M64;
  }
  /** Generator.random(): a double in [0, 1) from the top 53 bits. */
  function random() {
    return Number(nextUint64() >> 11n) / 9007199254740992;
  }
  /** Generator.choice(len(p), p=p): cdf = cumsum(p) / its last entry; the first index whose cdf > u. */
  function choice(p) {
    const cdf = new Float64Array(p.length);
    let acc = 0;
    for (let i = 0; i < p.length; i++) cdf[i] = acc += p[i];
    const total = cdf[p.length - 1];
    for (let i = 0; i < p.length; i++) cdf[i] /= total;
    const u = random();
    let lo = 0;
    let hi = p.length; // searchsorted(side="right"): the first i with cdf[i] > u
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] <= u) lo = mid + 1;
      else hi = mid;
    }
    return Math.min(lo, p.length - 1);
  }
  return { random, choice, state: () => ({ state, inc }) };
}
