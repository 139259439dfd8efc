"""The attention course's part of the build (content/site.yml names it): its widget kinds (one folder each under
widgets/), the option kinds they use (an example of the course's bank, one character), the Python packages the
browser's runtime ships (attention_core, and tang_poems: the poems for a training loop, browser/), the functions a
code cell calls to show a widget, and the data its widgets read: the real model SmolLM2-135M-Instruct (smollm2/) and
the Tang poems with the models trained on them (poems/)."""

from __future__ import annotations

from pathlib import Path

import attention_core
from builder.course import Course

from .poems.browser_data import package_files as poem_files
from .poems.corpus import LICENCE, POEM_MODELS, TANG_POEMS
from .smollm2.store import RUNS
from .smollm2.weights import MODEL
from .widget_options import OPTION_KINDS


def setup(course: Course) -> None:
    course.add_widgets(Path(__file__).parent / "widgets", package=f"{__name__}.widgets")
    for name, check in OPTION_KINDS.items():
        course.add_option_kind(name, check)
    course.add_browser_package(Path(attention_core.__file__).parent)
    # the Tang poems for the hands-on module's training loop: module 04's split, sliced, made at build time
    course.add_browser_package(Path(__file__).parent / "browser" / "tang_poems", data=poem_files)
    course.add_cell_widget("show_attention", "heatmap")  # attention_core.display
    course.add_cell_widget("show_row", "heatmap")
    for source in (MODEL, RUNS, TANG_POEMS, LICENCE, POEM_MODELS):  # builder/data_sources.py
        course.add_data_source(source)
