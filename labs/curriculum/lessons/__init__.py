"""Lesson pages: each module's `lesson.md`, rendered to sanitised HTML with its figures built in Python.

This package owns turning a module's lesson text into a page: the Markdown
(markdown-it-py, then nh3, through `labs.curriculum.markdown`) and the figures it names.
A lesson embeds a figure with a line of its own, `{{figure:name}}`; `name` is
registered by a builder decorated with `@lesson_figure("name")`
(`labs.curriculum.lessons.registry`). Builders live one module per course module
(`silicon.py`, `three_rules.py`, `roofline.py`, ...); every module of this
package is imported when the registry is first read, so a new lesson's figures
need only a new file here. A builder takes a `LessonContext` (what is live:
the fleet's heartbeats) and returns a Plotly figure as JSON, titled with where
its numbers came from (measured, queried from the driver, datasheet, or a model).

It may import `labs.curriculum.markdown`, `labs.fleet.heartbeats` and `gpu_worker`'s pure modules
(datasheets, memtrace_report); it writes nothing.
"""

from labs.curriculum.lessons.registry import LessonContext, RenderedLesson, figure_names, lesson_figure, render_lesson

__all__ = ["LessonContext", "RenderedLesson", "figure_names", "lesson_figure", "render_lesson"]
