"""Issue 32 points 1 and 15, for every figure of content/figures (later ones too):

* a figure that draws a Transformer block's normalisation says which architecture it draws (pre-norm or post-norm),
  and so does the caption of every page that shows it — one architecture per picture, named;
* a figure's words are the course's own: no run of 12 or more characters (whitespace ignored) is shared with a
  seed document, unless the run is mostly a Latin name (Transformer, softmax, token …);
* the authoring rules: a root viewBox and no fixed size, <title> and <desc> first, colours only through
  currentColor / the theme's variables."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tests.course.learner_text import FIGURES, PAGES, SEEDS, figure_text

SVG = "{http://www.w3.org/2000/svg}"
RUN = 12


def draws_a_block_with_normalisation(text: str) -> bool:
    return bool(re.search(r"Norm|归一化", text)) and bool(re.search(r"残差", text))


@pytest.mark.parametrize("figure", FIGURES, ids=lambda f: f.name)
def test_a_block_figure_names_its_architecture(figure) -> None:
    text = figure_text(figure)
    if not draws_a_block_with_normalisation(text):
        return
    assert re.search(r"pre-norm|post-norm", text), f"{figure.name}: say whether the block is pre-norm or post-norm"
    for page in PAGES:
        for m in re.finditer(
            rf"```\{{figure\}} figures/{re.escape(figure.name)}\n(.*?)```", page.read_text("utf-8"), re.S
        ):
            assert re.search(r"pre-norm|post-norm", m.group(1)), f"{page.name}: the caption of {figure.name}"


def latin_heavy(run: str) -> bool:
    return sum(c.isascii() and c.isalpha() for c in run) >= 5


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seed documents are not on this machine")
@pytest.mark.parametrize("figure", FIGURES, ids=lambda f: f.name)
def test_a_figures_words_are_the_courses_own(figure) -> None:
    seeds = "".join(p.read_text(encoding="utf-8", errors="ignore") for p in sorted(SEEDS.iterdir()) if p.is_file())
    seeds = re.sub(r"\s+", "", seeds)
    grams = {seeds[i : i + RUN] for i in range(len(seeds) - RUN + 1)}
    text = re.sub(r"\s+", "", figure_text(figure))
    shared = [g for g in (text[i : i + RUN] for i in range(len(text) - RUN + 1)) if g in grams and not latin_heavy(g)]
    assert not shared, f"{figure.name} follows a seed document: {shared[0]!r}"


FIXED_COLOUR_RE = re.compile(r"#[0-9a-fA-F]{3,8}\b|rgba?\(|hsla?\(")


@pytest.mark.parametrize("figure", FIGURES, ids=lambda f: f.name)
def test_a_figure_follows_the_authoring_rules(figure) -> None:
    svg = figure.read_text(encoding="utf-8")
    root = ET.fromstring(svg)
    assert root.get("viewBox") and root.get("width") is None and root.get("height") is None
    first = [child.tag for child in root][:2]
    assert first == [f"{SVG}title", f"{SVG}desc"], f"{figure.name}: <title> and <desc> come first"
    assert root.find(f"{SVG}title").text.strip() and root.find(f"{SVG}desc").text.strip()
    assert not FIXED_COLOUR_RE.search(re.sub(r"<!--.*?-->", "", svg, flags=re.S)), f"{figure.name}: a fixed colour"
