"""A good build of the real course (the run's shared build, tests/conftest.py `course_site`): complete, relative links
only, deterministic, no external references."""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path

import yaml

from builder.zipsite import zip_site
from tests.conftest import CONTENT, ROOT, all_widgets, build


def digest_tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_a_second_build_of_the_same_input_is_the_same_bytes(course_site, tmp_path):
    """Same input → same bytes: the shared build (a cold one on a fresh clone's empty cache) and a second build of the
    same content reusing the caches it filled. (A cold build against a warm one of the same course, every stage
    recomputed: examples/minimal's, tests/engine/test_minimal_example.py.)"""
    again = tmp_path / "again"
    build(CONTENT, again, python_runtime=True)
    assert digest_tree(again) == digest_tree(course_site)


def test_every_page_and_planned_page_is_listed_on_the_index(course_site):
    index = (course_site / "index.html").read_text(encoding="utf-8")
    for md in CONTENT.glob("*.md"):
        slug = md.stem
        if slug != "index":
            assert f'href="{slug}.html"' in index, slug
    # the planned pages are whatever site.yml still lists (pages move out of it as they are written)
    planned_slugs = [p["slug"] for p in yaml.safe_load((CONTENT / "site.yml").read_text("utf-8"))["planned"]]
    for planned in planned_slugs:
        assert f'data-slug="{planned}"' in index
        assert f'href="{planned}.html"' not in index, "planned pages must not be linked"


def test_pages_use_only_relative_urls_and_nothing_external_is_loaded(course_site):
    for html_file in course_site.glob("*.html"):
        html = html_file.read_text(encoding="utf-8")
        assert 'lang="zh-CN"' in html
        # (src, srcset: the build's figures, held by theme/js/site/lazy-figures.js until they near the view;
        # data-controller, data-runtime: the cells' controller and python-runtime.js, loaded by cells.js when first
        # needed)
        for attr, url in re.findall(r'\b(src|href|data-src|srcset|data-controller|data-runtime)="([^"]*)"', html):
            if attr != "href" or re.search(r"<link[^>]+href=\"" + re.escape(url), html):
                if url.startswith("data:"):
                    continue
                assert not re.match(r"^[a-z]+:|^//|^/", url), f"{html_file.name}: non-relative {attr}={url}"
                # and it is there: a page pointing at an image or script the build never wrote loads with a 404
                assert (course_site / url.split("#")[0].split("?")[0]).is_file(), f"{html_file.name}: missing {url}"
        # every link to a page of the site resolves (links out, like module 04's paper at jmlr.org, are not ours)
        for url in re.findall(r'href="(?![a-z]+:|//)([^"#]+\.html)(?:#[^"]*)?"', html):
            assert not url.startswith("/") and (course_site / url).exists(), f"{html_file.name}: dead link {url}"


def test_module_05_06_and_07_link_each_other_live(course_site):
    m05 = (course_site / "module-05-attention.html").read_text("utf-8")
    m06 = (course_site / "module-06-transformer.html").read_text("utf-8")
    m07 = (course_site / "module-07-train-transformer.html").read_text("utf-8")
    assert re.search(r'<a [^>]*href="module-06-transformer.html"', m05)
    assert re.search(r'<a [^>]*href="module-05-attention.html"', m06)
    assert re.search(r'<a [^>]*href="module-07-train-transformer.html"', m06)
    assert re.search(r'<a [^>]*href="module-06-transformer.html"', m07)


def test_module_07_is_on_the_path_tracked_searched_and_in_the_zip(course_site, tmp_path):
    """A page joins everything without registering it (tests/engine/test_new_pages.py shows it on a small site);
    here the real module 07: the index's learning path in order, progress, search and the offline zip with the
    typing widget's weights."""
    index = (course_site / "index.html").read_text("utf-8")
    path = re.search(r'<ol class="cards course-path".*?</ol>', index, re.S).group(0)
    slugs = re.findall(r'data-slug="([^"]+)"', path)
    order = ["module-04-bigram-mlp", "module-05-attention", "module-06-transformer", "module-07-train-transformer"]
    assert [s for s in slugs if s in order] == order
    course = json.loads(
        re.search(r'<script type="application/json" id="course-data">(.*?)</script>', index, re.S).group(1)
    )
    assert "module-07-train-transformer" in [p["slug"] for p in course["pages"]]
    search = (course_site / "assets" / "search-index.js").read_text("utf-8")
    assert "在唐诗上训练一个 Transformer" in search
    names = zipfile.ZipFile(zip_site(course_site, tmp_path / "course.zip")).namelist()
    assert any(n.endswith("/module-07-train-transformer.html") for n in names)
    assert any("/assets/widgets/poem-writer-" in n for n in names)
    # the Python runtime: scripts only (its wrappers, builder/runtime/wrappers.py), no binary copy beside them
    py = [n.rsplit("/", 1)[1] for n in names if "/assets/python/" in n and not n.endswith("/")]
    assert py and not [n for n in py if not n.endswith(".js")]


def test_no_raw_math_left_and_no_math_javascript(course_site):
    for html_file in course_site.glob("*.html"):
        html = html_file.read_text(encoding="utf-8")
        text = re.sub(
            r"<script.*?</script>|<annotation.*?</annotation>|<pre.*?</pre>|<textarea.*?</textarea>",
            "",
            html,
            flags=re.S,
        )
        assert "$$" not in text, html_file.name
        assert "katex.min.js" not in html and "auto-render" not in html


def test_katex_css_and_fonts_are_shipped(course_site):
    css = (course_site / "assets/katex/katex.min.css").read_text(encoding="utf-8")
    fonts = re.findall(r"url\((fonts/[^)]+)\)", css)
    assert fonts and all((course_site / "assets/katex" / f).exists() for f in fonts)
    assert not any(f.endswith((".ttf", ".woff")) for f in fonts)


def test_katex_css_is_pruned_to_the_classes_of_the_site_formulas(course_site):
    from builder.katex.css import classes_in

    shipped = (course_site / "assets/katex/katex.min.css").read_text(encoding="utf-8")
    full = (ROOT / "node_modules/katex/dist/katex.min.css").read_text(encoding="utf-8")
    used = set().union(*(classes_in(p.read_text(encoding="utf-8")) for p in course_site.glob("*.html")))
    assert ".katex{" in shipped and ".katex .mfrac" in shipped and len(shipped) < len(full) / 3
    rules = re.findall(r"([^{}]+)\{[^{}]*\}", shipped)
    selectors = [s for r in rules if not r.startswith("@") for s in r.split(",")]
    for selector in selectors:
        needs = set(re.findall(r"\.(-?[_a-zA-Z][\w-]*)", re.sub(r":not\([^)]*\)", "", selector)))
        assert needs <= used, selector
    for page in course_site.glob("*.html"):
        if page.name == "404.html":
            continue  # self-contained (tests/e2e/test_not_found.py): no formulas, no theme stylesheet
        assert re.search(r'href="assets/katex/katex\.min\.css\?v=[0-9a-f]{10}"', page.read_text(encoding="utf-8"))


def test_each_page_links_the_theme_stylesheet_for_the_features_it_has(course_site):
    """Optional stylesheets (cells, quiz, widgets, index: builder/assets.py OPTIONAL_CSS) only where needed, and
    every page's bundle is the full stylesheet minus the parts the page does not need, in the same order."""
    from builder.assets import OPTIONAL_CSS, css_bundle_name
    from builder.bundle import esbuild_minify_css

    minified = {
        p.name: esbuild_minify_css(ROOT, p.read_text(encoding="utf-8")) for p in (ROOT / "theme/css").glob("*.css")
    }
    order = sorted(minified, key=lambda n: (n != "base.css", n))
    needs_of = {
        "index.html": {"index"},
        "module-05-attention.html": {"cells", "quiz", "widgets"},
        "attention-explained.html": {"cells", "quiz", "widgets"},
    }
    for name, needs in needs_of.items():
        html = (course_site / name).read_text(encoding="utf-8")
        href = re.findall(r'<link rel="stylesheet" href="(assets/site[^"?]*\.css)\?v=', html)
        assert href == [f"assets/{css_bundle_name(needs)}"], name
        shipped = (course_site / href[0]).read_text(encoding="utf-8")
        assert shipped == "".join(minified[n] for n in order if n not in OPTIONAL_CSS or OPTIONAL_CSS[n] in needs)
        assert ("heat-cell" in shipped) == ("widgets" in needs) and (".cell-run" in shipped) == ("cells" in needs)
        assert (".cards{" in shipped and ".progress-continue{" in shipped) == ("index" in needs)


def test_a_widget_kinds_own_rules_are_linked_only_by_pages_that_have_one(course_site):
    """A widget folder's style.css → assets/widgets-<kind>.css, after the theme's bundle, on exactly the pages with a
    widget of that kind or of a kind whose rules build on it (`Widget.styles`, linked first: Course.stylesheets) —
    issue 19: module 06 carries none of module 04's CSS."""
    from builder.bundle import esbuild_minify_css
    from builder.course import load_course

    course = load_course(CONTENT, ROOT)
    sheets = {kind: folder / "style.css" for kind, folder in course.widget_folders.items()}
    sheets = {kind: path for kind, path in sheets.items() if path.is_file()}
    seen = set()
    for page in course_site.glob("*.html"):
        html = page.read_text(encoding="utf-8")
        kinds = set(re.findall(r'<div class="widget widget-[\w-]+" data-widget="([\w-]+)"', html))
        links = re.findall(r'<link rel="stylesheet" href="assets/([^"?]+)\?v=', html)
        linked = [h[len("widgets-") : -len(".css")] for h in links if h.startswith("widgets-")]
        assert linked == course.stylesheets(kinds), page.name
        needed = set(kinds) | {used for k in kinds for used in all_widgets()[k].styles}
        assert set(linked) == {k for k in needed if k in sheets}, page.name
        if linked:  # after the bundle: the cascade order of the one stylesheet these rules came from
            assert links.index(f"widgets-{linked[0]}.css") > next(
                i for i, h in enumerate(links) if h.startswith("site")
            )
        seen.update(linked)
    assert seen, "no page links a widget kind's own stylesheet"
    for kind in seen:
        shipped = (course_site / "assets" / f"widgets-{kind}.css").read_text(encoding="utf-8")
        assert shipped == esbuild_minify_css(ROOT, sheets[kind].read_text(encoding="utf-8"))
    m06 = (course_site / "module-06-transformer.html").read_text(encoding="utf-8")
    assert "widgets-bigram.css" not in m06 and "widgets-bigram.css" in (
        course_site / "module-04-bigram-mlp.html"
    ).read_text(encoding="utf-8")
    bundle = (course_site / "assets" / "site-cells-quiz-widgets.css").read_text(encoding="utf-8")
    assert ".nt-lens" not in bundle and ".bigram-poem" not in bundle and ".heat-cell" in bundle


def data_script_numbers(site, where: dict, part: str):
    """The JSON a widget's data script (builder/bundle.py widget_data_script) holds."""
    script = (site / where["data"]).read_text(encoding="utf-8")
    prefix = f"((self.Course=self.Course||{{}}).{part}=self.Course.{part}||{{}}).d{where['key']}="
    assert script.startswith(prefix)
    return json.loads(script[len(prefix) :].rstrip().rstrip(";"))


def widget_blocks(html: str, kind: str) -> list[dict]:
    return [
        json.loads(b)
        for b in re.findall(
            rf'data-widget="{kind}".*?<script type="application/json" class="widget-data">(.*?)</script>', html, re.S
        )
    ]


def test_next_tokens_numbers_travel_in_a_data_script_not_in_the_page(course_site):
    """Module 06's next-token widgets keep their probabilities out of the page's first view: the widget loads them."""
    html = (course_site / "module-06-transformer.html").read_text(encoding="utf-8")
    blocks = widget_blocks(html, "next-token")
    assert len(blocks) == 2
    for data, heavy in zip(blocks, (("probs", "rest"), ("lens", "lens_prob", "rank", "answer_prob"))):
        assert all(not set(heavy) & set(p) for p in data["prompts"])
        numbers = data_script_numbers(course_site, data, "nextToken")
        assert [sorted(n) for n in numbers] == [sorted(heavy)] * len(data["prompts"])


def test_the_heatmaps_of_bigram_and_positional_encoding_travel_in_data_scripts(course_site):
    """Module 04's bigram heatmap and module 06's position encodings and similarities are loaded when the
    widget mounts; the page carries neither (nor the fallback-only corner), and the numbers are the build's."""
    from attention_core.positional import offset_similarity

    [bigram] = widget_blocks((course_site / "module-04-bigram-mlp.html").read_text(encoding="utf-8"), "bigram")
    assert not {"counts", "probs", "rows"} & set(bigram)
    heat = data_script_numbers(course_site, bigram["heat"], "bigram")
    assert sorted(heat) == ["counts", "probs", "rows"]
    n = len(bigram["chars"])
    assert len(heat["counts"]) == len(heat["probs"]) == len(heat["rows"]) == n
    assert max(max(row) for row in heat["counts"]) == bigram["max_count"]
    [pe] = widget_blocks(
        (course_site / "module-06-transformer.html").read_text(encoding="utf-8"), "positional-encoding"
    )
    assert all(sorted(e) == ["dims"] for e in pe["encodings"])
    numbers = data_script_numbers(course_site, pe, "positionalEncoding")
    for e in pe["encodings"]:
        sims = numbers[str(e["dims"])]["similarity"]
        assert max(abs(a - b) for a, b in zip(sims, offset_similarity(pe["positions"], e["dims"], pe["base"]))) < 1e-6


def test_each_page_loads_the_scripts_of_its_own_widget_kinds_only(course_site):
    for page in course_site.glob("*.html"):
        html = page.read_text(encoding="utf-8")
        kinds = set(re.findall(r'<div class="widget widget-[\w-]+" data-widget="([\w-]+)"', html))
        if re.search(r"^show_(?:attention|row)\(", html, re.M):  # a code cell calls it: the heatmap it shows
            kinds.add("heatmap")
        scripts = re.findall(r'<script src="assets/widget-([\w-]+)\.js\?v=[0-9a-f]{10}" defer>', html)
        lazy = re.search(r'<script type="application/json" id="lazy-widget-scripts">(.*?)</script>', html)
        lazy_kinds = json.loads(lazy.group(1)) if lazy else {}
        assert all(url.startswith(f"assets/widget-{k}.js?v=") for k, url in lazy_kinds.items())
        assert sorted(scripts + list(lazy_kinds)) == sorted(kinds), page.name  # each kind once, eager or lazy
        # after site.js (which keeps the fallbacks for print before any widget replaces them)
        assert all(html.index("assets/site.js") < html.index(f"assets/widget-{k}.js") for k in kinds)
    assert "heatmap" in (course_site / "module-05-attention.html").read_text(encoding="utf-8")
    site_js = (course_site / "assets/site.js").read_text(encoding="utf-8")
    assert "heat-legend" not in site_js and "heat-legend" in (course_site / "assets/widget-heatmap.js").read_text()
