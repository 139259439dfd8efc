"""The text colour of every heat cell is chosen from the computed contrast on its own background (WCAG 2.1 AA:
at least 4.5:1), light and dark, over the whole scale — one rule in builder/widgets/fallback.py and
theme/js/widgets/common.js (run in Node here), on the colours theme/css/widgets.css really uses."""

from __future__ import annotations

import re
import shutil

import pytest

from builder.widgets.fallback import HEAT_COLOURS, _hex_rgb, contrast, heat_background, high_ink, ink_classes
from tests.conftest import ROOT, run_js_module

SCALE = [k / 100 for k in range(101)]  # --w is written to 2 decimals: these are all the backgrounds there are


def css_colours() -> dict[str, dict[str, str]]:
    css = (ROOT / "theme" / "css" / "widgets.css").read_text(encoding="utf-8")
    light = css.split("@media (prefers-color-scheme: dark)")[0]
    dark = css.split("@media (prefers-color-scheme: dark)")[1].split("}")[0]

    def pick(block: str) -> dict[str, str]:
        return {
            k: re.search(rf"--heat-{k}:\s*(#[0-9a-f]{{6}})", block).group(1) for k in ("lo", "hi", "text", "text-high")
        }

    return {"light": pick(light), "dark": pick(dark)}


def rgb(colour: str) -> tuple[int, ...]:
    return tuple(round(c * 255) for c in _hex_rgb(colour))


def test_the_rule_uses_the_stylesheet_colours() -> None:
    assert css_colours() == HEAT_COLOURS


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_shade_of_the_scale_has_at_least_4_5_to_1(scheme: str) -> None:
    colours = HEAT_COLOURS[scheme]
    worst = 99.0
    for w in SCALE:
        bg = heat_background(w, scheme)
        ink = colours["text-high"] if high_ink(w, scheme) else colours["text"]
        worst = min(worst, contrast(bg, rgb(ink)))
        assert contrast(bg, rgb(ink)) >= 4.5, (scheme, w, bg, ink)
    assert worst < 5  # the scale really crosses the middle, where a fixed threshold failed (4.17–4.38:1)
    assert heat_background(0, scheme) == rgb(colours["lo"]) and heat_background(1, scheme) == rgb(colours["hi"])


def test_the_fallback_tables_carry_the_chosen_ink() -> None:
    from builder.widgets.fallback import weights_table

    html = weights_table(["a", "b"], [[0.5, 0.5], [0.04, 0.96]], "t")
    assert f'<td class="{" ".join(ink_classes(0.96))}" style="--w:.96">96</td>' in html
    assert '<td style="--w:.04">4</td>' in html  # a pale cell keeps the default ink in both schemes


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node")
def test_the_widgets_choose_exactly_like_the_build(tmp_path) -> None:
    script = (
        "import { inkClasses, heatBackground, HEAT_COLOURS } from './common.mjs';"
        "const scale = [...Array(101).keys()].map((k) => k / 100);"
        "process.stdout.write(JSON.stringify({colours: HEAT_COLOURS, ink: scale.map(inkClasses),"
        " bg: scale.map((w) => [heatBackground(w, 'light'), heatBackground(w, 'dark')])}));"
    )
    out = run_js_module(tmp_path, {"common.mjs": ROOT / "theme" / "js" / "widgets" / "common.js"}, script)
    assert out["colours"] == HEAT_COLOURS
    assert out["ink"] == [ink_classes(w) for w in SCALE]
    assert out["bg"] == [[list(heat_background(w, "light")), list(heat_background(w, "dark"))] for w in SCALE]
