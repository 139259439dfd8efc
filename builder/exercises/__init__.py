"""Exercises that check themselves: the build runs every exercise's reference solution and starter code through
its checks in the reader's runtime (verify.py, a stage after the code cells, cached by content) and renders the
block (render.py); the learner's browser runs the same checker (builder/runtime/browser/exercise_runtime.py) in
the cells' worker (theme/js/cells/exercise.js). The syntax is builder/markdown/exercise.py."""

from .render import render_exercise
from .verify import harness_code, verify_exercises_of_pages

__all__ = ["harness_code", "render_exercise", "verify_exercises_of_pages"]
