"""The minimal course's part of the build (site.yml names it: `course: minimal_course`): one widget kind,
`softmax3`, from the folder widgets/softmax3/. A course's `setup(course)` registers what the engine cannot know
by itself (builder/course.py); this one needs nothing but its widgets."""

from __future__ import annotations

from pathlib import Path

from builder.course import Course


def setup(course: Course) -> None:
    course.add_widgets(Path(__file__).parent / "widgets", package=f"{__name__}.widgets")
