"""The fast KaTeX engine (V8 via mini-racer) must be a drop-in for the reference (pykatex): same HTML, byte for
byte, on every formula of the course and a synthetic set, and the same error messages for bad TeX."""

from __future__ import annotations

import pytest

from builder import pipeline
from builder.content import load_site
from builder.errors import BuildFailed, Problems
from builder.katex import engines
from builder.model import BuildOptions
from tests.conftest import ROOT, build

pytest.importorskip("py_mini_racer")

SYNTHETIC = [
    (r"QK^\top", False),
    (r"\mathrm{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V", True),
    (r"\begin{cases} 0 & i < j \\ -\infty & i \ge j \end{cases}", True),
    (r"\begin{gathered} a = b \\ c = d \end{gathered}", True),
    (r"\text{注意力权重} = \alpha_{ij}", False),
    (r"\sum_{j=1}^{n} e^{s_j}", True),
    (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", True),
    (r"\mathbb{R}^{n \times d}", False),
    (r"\underbrace{x + y}_{\text{和}}", True),
    (r"\color{red} x", False),
    (r"\hat{y} \approx \tilde{x}", False),
    (r"\operatorname{argmax}_k \; s_k", True),
    (r"\xrightarrow{\text{softmax}}", False),
    # bad TeX: both engines must reject it with the same message
    (r"\frac{a", False),
    (r"\notacommand{x}", True),
    (r"x^^2", False),
    (r"\begin{cases} a", True),
    (r"\left( x", False),
    ("}", False),
]


def course_formulas() -> set[tuple[str, bool]]:
    problems = Problems()
    site = load_site(ROOT / "content", ROOT, problems)
    md = pipeline.markdown_parser(BuildOptions(python_runtime=False))
    formulas: set[tuple[str, bool]] = set()
    for source in site.pages:
        formulas.update(f for f, _ in pipeline.parse(md, source, site).facts.formulas)
    return formulas


@pytest.mark.slow
def test_v8_engine_is_byte_identical_to_pykatex_on_course_and_synthetic_formulas():
    formulas = sorted(course_formulas() | set(SYNTHETIC))
    assert len(formulas) > 40  # the course alone has dozens; an empty corpus would prove nothing
    # The process-wide engine the build uses (one V8 isolate per process): a second MiniRacer created in a test
    # process that had already run a build and Playwright segfaulted once in mr_init_context.
    engine = engines.default_engine(ROOT)
    assert engine.name == "v8"
    fast = engine.render_many(formulas)
    reference = engines.PykatexEngine().render_many(formulas)
    mismatches = [f for f, a, b in zip(formulas, fast, reference) if a != b]
    assert not mismatches, f"engines differ on {mismatches[:5]}"
    failed = {f for f, (html, _) in zip(formulas, reference) if html is None}
    assert failed == {
        f for f in SYNTHETIC if f[0] in {r"\frac{a", r"\notacommand{x}", r"x^^2", r"\begin{cases} a", r"\left( x", "}"}
    }


def test_default_engine_is_v8():
    assert engines.default_engine(ROOT).name == "v8"


def test_bad_formula_is_reported_with_file_line_and_katex_message(make_content, tmp_path):
    make_content("broken.md", "---\ntitle: 坏公式\n---\n第一行\n\n正文 $\\frac{a$ 结束。\n")
    with pytest.raises(BuildFailed) as failed:
        build(make_content.dir, tmp_path / "out", cache_dir=tmp_path / "cache")
    messages = [str(p) for p in failed.value.problems.sorted()]
    assert any("broken.md:6: " in m and "Unexpected end of input" in m and "\\frac{a" in m for m in messages), messages
