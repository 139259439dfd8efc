"""attention_course/poems/tiny_gpt.js: the browser's forward pass equals attention_core.tiny_gpt's on the weights
that weights_format.py writes (Python writes, JavaScript reads)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import tiny_gpt
from attention_course.poems import weights_format
from tests.conftest import ROOT, run_js_module

JS = ROOT / "attention_course" / "poems" / "tiny_gpt.js"
CFG = tiny_gpt.Config(vocab_size=40, context=16, d_model=36, n_layers=2, n_heads=4, d_ff=66)  # 66: not a multiple of 4

SCRIPT = """
import { readFileSync } from "node:fs";
import { decodeWeights, encode, forward, nextProbs } from "./tiny_gpt.mjs";
const data = JSON.parse(readFileSync("./data.json", "utf8"));
const out = {};
for (const [name, payload] of Object.entries(data.payloads)) {
  const model = decodeWeights(payload);
  const r = forward(model, data.ids);
  const last = forward(model, data.ids, { lastOnly: true });
  out[name] = {
    params: Object.fromEntries(Object.entries(model.params).map(([k, v]) => [k, Array.from(v)])),
    logits: Array.from(r.logits),
    last: Array.from(last.logits),
    attention: r.attention.map((layer) => layer.map((w) => Array.from(w))),
    probs: Array.from(nextProbs(model, data.ids, 0.8)),
  };
}
out.encoded = encode(data.text, decodeWeights(data.payloads.float32).vocab);
console.log(JSON.stringify(out));
"""


def trained_looking(cfg: tiny_gpt.Config) -> tiny_gpt.Params:
    rng = np.random.default_rng(7)
    p = tiny_gpt.init_params(cfg, seed=7)
    return {k: (v + rng.normal(0, 0.2, v.shape)).astype(np.float32) for k, v in p.items()}


def test_js_forward_equals_numpy_on_every_encoding(tmp_path):
    params = trained_looking(CFG)
    order = tiny_gpt.param_names(CFG)
    vocab = ["◆", "□"] + list("白日依山尽黄河入海流欲穷千里目更上一层楼，。床前明月光疑是地霜举头望低思故𬬻")
    ids = [0, 2, 3, 4, 5, 6, 22, 7, 8, 9, 10, 11, 23, 12, 13, 14]  # a full context
    assert len(vocab) == CFG.vocab_size
    payloads, expected = {}, {}
    for enc in weights_format.ENCODINGS:
        blob, layout = weights_format.pack(params, order, matrices=enc)
        payloads[enc] = weights_format.browser_payload(blob, layout, config=CFG.to_dict(), vocab="".join(vocab))
        expected[enc] = weights_format.unpack(blob, layout)
    out = run_js_module(
        tmp_path, {"tiny_gpt.mjs": JS}, SCRIPT, {"payloads": payloads, "ids": ids, "text": "白日依山尽龘𬬻"}
    )
    assert out["encoded"] == [0, 2, 3, 4, 5, 6, 1, 39]  # code points, not UTF-16 units; unknown → 1
    for enc in weights_format.ENCODINGS:
        got, want = out[enc], expected[enc]
        for name in order:  # the reader decodes exactly what the writer wrote
            assert np.array_equal(np.array(got["params"][name], dtype=np.float32), want[name].ravel()), (enc, name)
        ref = tiny_gpt.forward(want, CFG, ids)
        logits = np.array(got["logits"]).reshape(len(ids), CFG.vocab_size)
        attention = np.array(got["attention"]).reshape(CFG.n_layers, CFG.n_heads, len(ids), len(ids))
        assert np.abs(logits - ref.logits).max() <= 1e-4, enc
        assert np.abs(attention - ref.attention).max() <= 1e-4, enc
        assert np.abs(np.array(got["last"]) - ref.logits[-1]).max() <= 1e-4
        probs = tiny_gpt.next_char_probs(want, CFG, ids, temperature=0.8)
        assert np.abs(np.array(got["probs"]) - probs).max() <= 1e-5
    # the quantised matrices are close to the originals: one step of a row's scale at most
    q = expected["int8-rows"]
    for name in order:
        if params[name].ndim == 2:
            step = np.abs(params[name]).max(axis=1, keepdims=True) / 127
            assert np.all(np.abs(q[name] - params[name]) <= step / 2 + 1e-7), name
        else:
            assert np.array_equal(q[name], params[name])


def test_real_weights_in_js_equal_numpy_on_the_worked_example(tmp_path):
    from attention_course.poems import artifacts

    try:
        blob, meta = artifacts.read("tiny_gpt")
    except artifacts.StaleWeights:
        pytest.skip("no trained weights yet")
    cfg = tiny_gpt.Config(**meta["config"])
    vocab = list(meta["vocab"])
    text = "白日依山尽，黄河入海流。欲穷千里目，更上一层楼。"
    ids = [0] + [vocab.index(ch) if ch in vocab else 1 for ch in text]
    payload = weights_format.browser_payload(blob, meta["layout"], config=meta["config"], vocab=meta["vocab"])
    script = """
import { readFileSync } from "node:fs";
import { decodeWeights, encode, forward } from "./tiny_gpt.mjs";
const data = JSON.parse(readFileSync("./data.json", "utf8"));
const model = decodeWeights(data.payload);
const ids = encode(data.text, model.vocab);
const r = forward(model, ids);
const full = Array.from({ length: model.config.context }, (_, i) => ids[i % ids.length]);
forward(model, full);
const t0 = performance.now();
const n = 5;
for (let i = 0; i < n; i++) forward(model, full);
const ms = (performance.now() - t0) / n;
const attention = r.attention.map((l) => l.map((w) => Array.from(w)));
console.log(JSON.stringify({ ids, logits: Array.from(r.logits), attention, ms }));
"""
    out = run_js_module(tmp_path, {"tiny_gpt.mjs": JS}, script, {"payload": payload, "text": text})
    assert out["ids"] == ids
    ref = tiny_gpt.forward(weights_format.unpack(blob, meta["layout"]), cfg, ids)
    assert np.abs(np.array(out["logits"]).reshape(len(ids), -1) - ref.logits).max() <= 1e-4
    assert np.abs(np.array(out["attention"]).reshape(ref.attention.shape) - ref.attention).max() <= 1e-4
    print(f"JS forward, {cfg.context} ids: {out['ms']:.1f} ms")
