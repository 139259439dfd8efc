"""The `model-attention` widget's data, from the real model: the claims module 05 ② makes about it hold on the
computed numbers (if the model or the code changed them, the lesson would be wrong and this fails), every shown
row sums to exactly 100, and bad input is reported at its line."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from attention_course import smollm2 as real_model
from builder.model import BuildOptions
from tests.conftest import ROOT, TEST_CACHE, all_widgets
from tests.plugin_harness import render_page

OPTIONS = BuildOptions(root=ROOT, cache_dir=TEST_CACHE, python_runtime=False)
DATA_RE = re.compile(r'<script type="application/json" class="widget-data">(.*?)</script>', re.S)


def widget(body: str) -> tuple[dict, dict[str, bytes], str]:
    """(embedded data, extra files, HTML) of one model-attention block through the real page stages."""
    html, problems, facts = render_page(f"```{{widget}} model-attention\n{body}```\n", cache_dir=TEST_CACHE)
    assert problems == []
    return json.loads(DATA_RE.search(html).group(1)), facts.files, html


def test_largest_remainder_rows_sum_to_exactly_100_and_stay_close() -> None:
    rng = np.random.default_rng(0)
    for t in (1, 2, 5, 12, 48):
        w = rng.dirichlet(np.full(t, 0.3), size=200)
        p = real_model.largest_remainder_percents(w)
        assert (p.sum(axis=1) == 100).all()
        assert np.abs(p - w * 100).max() < 1  # never off by a whole point
    masked = np.array([[0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]])
    assert real_model.largest_remainder_percents(masked)[0, 2] == 0  # a masked weight never gets a point


def test_the_compare_view_holds_what_the_lesson_says() -> None:
    data, files, html = widget("view: compare\nsentences: [animal-tired, animal-wide]\nlayer: 4\nhead: 2\n")
    tired, wide = data["sentences"]
    # the page carries the first matrices once, in the fallback tables (the live view reads them there)
    assert tired["matrix"] is None and wide["matrix"] is None
    for s in (tired, wide):
        run = real_model.sentence_run(OPTIONS, s["text"])
        s["matrix"] = [row[: i + 1] for i, row in enumerate(run.matrix(4, 2))]
        table = re.search(r"<caption>" + re.escape(s["title"]) + r"：.*?</table>", html, re.S).group(0)
        assert [
            [int(x) for x in re.findall(r">(\d+)</td>", r)]
            for r in re.findall(r"<tr><th scope=\"row\">.*?</tr>", table)
        ] == s["matrix"]
    it = tired["tokens"].index(" it")
    facts = data["compare"]
    # a causal model: every row before the sentences part is the same in both, the it row included
    assert tired["tokens"][: facts["shared_prefix"]] == wide["tokens"][: facts["shared_prefix"]]
    assert it < facts["shared_prefix"] and it in facts["identical_rows"]
    assert facts["identical_rows"] == list(range(facts["shared_prefix"]))
    # "tired 更多地回看 animal，wide 更多地回看 street"
    (t_focus, w_focus) = facts["focus"]
    animal, street = tired["tokens"].index(" animal"), tired["tokens"].index(" street")
    t_row, w_row = tired["matrix"][t_focus["row"]], wide["matrix"][w_focus["row"]]
    assert tired["tokens"][t_focus["row"]] == " tired" and wide["tokens"][w_focus["row"]] == " wide"
    assert t_row[animal] > t_row[street] and w_row[street] > w_row[animal]
    # the caption quotes exactly those numbers (not typed by hand)
    assert f"tired → animal {t_row[animal]}%、street {t_row[street]}%" in html
    assert f"wide → animal {w_row[animal]}%、street {w_row[street]}%" in html
    # what is shown is causal and sums to 100 in every row
    for s in data["sentences"]:
        for i, row in enumerate(s["matrix"]):
            assert sum(row) == 100 and not any(row[i + 1 :])
    assert list(files) == [data["data"]]


def test_the_full_data_script_holds_every_layer_and_head_and_matches_the_first_view() -> None:
    data, files, _ = widget("layer: 7\nhead: mean\n")
    script = files[data["data"]].decode()
    payload = json.loads(script[script.index("=", script.index(f"d{data['key']}")) + 1 :].rstrip().rstrip(";"))
    for s in data["sentences"]:
        run = real_model.sentence_run(OPTIONS, s["text"])
        assert payload[s["id"]]["percents"] == run.packed_base64()
        assert s["matrix"] is None or s["matrix"] == [row[: i + 1] for i, row in enumerate(run.mean_matrix(7))]
        t = len(s["tokens"])
        assert len(run.percents) == 30 * 9 * t * (t + 1) // 2
        for layer in (0, 29):
            for head in (0, 8):
                assert all(sum(row) == 100 for row in run.matrix(layer, head))


def test_the_gallery_finds_specialised_heads() -> None:
    data, _, html = widget("view: gallery\n")
    assert [g["pattern"] for g in data["gallery"]] == ["previous_token", "first_token", "self_token", "induction"]
    for g in data["gallery"]:
        assert g["score"] > 2 * g["median"] and g["score"] >= g["runner_up"][2]
        assert 0 <= g["layer"] < 30 and 0 <= g["head"] < 9
        assert f"第 {g['layer']} 层 · 头 {g['head']}" in html


@pytest.mark.parametrize(
    "body,message",
    [
        (
            "sentences: [animal-tired, nope]\n",
            "content/test.md:2: option 'sentences': unknown sentence id 'nope' (known: "
            "animal-tired, animal-wide, repeat-name, capitals) [widget]",
        ),
        (
            "layer: 30\n",
            "content/test.md:2: option 'layer' must be between 0 and 29 (SmolLM2-135M has 30 layers), got 30 [widget]",
        ),
        (
            "head: 9\n",
            "content/test.md:2: option 'head' must be between 0 and 8 or mean (each layer has 9 heads), got 9 [widget]",
        ),
        ("head: all\n", "content/test.md:2: option 'head' must be a head number (0, 1, …) or mean, got 'all' [widget]"),
        (
            "view: compare\nsentences: [animal-tired]\n",
            "content/test.md:3: the compare view shows exactly two sentences, got 1 [widget]",
        ),
    ],
)
def test_bad_options_are_reported_at_their_line(body: str, message: str) -> None:
    html, problems, _ = render_page(f"```{{widget}} model-attention\n{body}```\n", cache_dir=TEST_CACHE)
    assert problems == [message] and "widget-data" not in html


@pytest.mark.parametrize(
    "sentence,message",
    [
        ('{text: "  "}', "the sentence is empty"),
        ('{text: "' + "word " * 199 + 'word"}', "the sentence has 200 tokens; at most 48 fit a readable heatmap"),
    ],
)
def test_an_authors_empty_or_200_token_sentence_is_reported_at_its_line(sentence: str, message: str) -> None:
    html, problems, _ = render_page(
        f"```{{widget}} model-attention\nlayer: 1\nsentences: [{sentence}]\n```\n", cache_dir=TEST_CACHE
    )
    assert problems == [f"content/test.md:3: sentence 'custom-1': {message} [widget]"] and "widget-data" not in html


def test_an_authors_own_sentence_is_shown_with_its_title() -> None:
    data, _, html = widget('sentences: [{text: "The cat sat on the mat.", title: 猫}, capitals]\n')
    assert [s["id"] for s in data["sentences"]] == ["custom-1", "capitals"] and data["sentences"][0]["title"] == "猫"
    assert data["sentences"][0]["tokens"][:2] == ["The", " cat"]


def test_an_empty_or_too_long_sentence_is_a_build_error() -> None:
    with pytest.raises(real_model.ModelInputError, match="empty"):
        real_model.sentence_run(OPTIONS, "  ")
    with pytest.raises(real_model.ModelInputError, match="tokens; at most 48"):
        real_model.sentence_run(OPTIONS, "word " * 200)


def test_a_tampered_model_file_is_a_build_error_at_the_widget(tmp_path, monkeypatch) -> None:
    from attention_course.smollm2.weights import MODEL

    monkeypatch.setenv("COURSE_MACHINE_CACHE", str(tmp_path / "machine"))
    MODEL.location().parent.mkdir(parents=True)
    MODEL.location().write_bytes(b"not a model")
    html, problems, _ = render_page("```{widget} model-attention\nsentences: [capitals]\n```\n", cache_dir=tmp_path)
    assert len(problems) == 1 and problems[0].startswith("content/test.md:1: the model SmolLM2-135M is not available: ")
    assert "sha256" in problems[0] and "\n" not in problems[0] and problems[0].endswith("[widget]")
    assert "widget-data" not in html
    assert all_widgets()["model-attention"].title.startswith("真实模型")
