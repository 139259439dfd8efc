"""attention_course/poems/numpy_random.js is NumPy's default_rng in the browser, bit for bit: the same doubles from
`random()` and the same picks from `choice(p)` as numpy.random.default_rng(seed) — so the poem-writer widget's
continuations are the build sampler's (transformer_lm.sample)."""

from __future__ import annotations

import numpy as np

from tests.conftest import ROOT, run_js_module

JS = ROOT / "attention_course" / "poems" / "numpy_random.js"
SEEDS = [0, 1, 7, 2**31 - 1, 2**32 + 5, 123456789012345]  # one word of entropy, and more than one

SCRIPT = """
import { readFileSync } from "node:fs";
import { defaultRng } from "./numpy_random.mjs";
const data = JSON.parse(readFileSync("./data.json", "utf8"));
const out = {};
for (const seed of data.seeds) {
  const rng = defaultRng(seed);
  const random = Array.from({ length: 20 }, () => rng.random());
  const picks = data.ps.map((p) => Array.from({ length: 25 }, () => rng.choice(p)));
  out[seed] = { random, picks };
}
console.log(JSON.stringify(out));
"""


def test_streams_and_choices_equal_numpys(tmp_path):
    rng = np.random.default_rng(3)
    ps = [[0.1, 0.2, 0.3, 0.4], (lambda x: (x / x.sum()).tolist())(rng.random(2002) ** 4), [1.0], [0.0, 0.5, 0.0, 0.5]]
    out = run_js_module(tmp_path, {"numpy_random.mjs": JS}, SCRIPT, {"seeds": SEEDS, "ps": ps})
    for seed in SEEDS:
        want = np.random.default_rng(seed)
        assert out[str(seed)]["random"] == want.random(20).tolist()  # exact doubles
        picks = [[int(want.choice(len(p), p=np.asarray(p))) for _ in range(25)] for p in ps]
        assert out[str(seed)]["picks"] == picks
