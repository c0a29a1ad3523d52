"""The figure registry and the lesson renderer: `{{figure:name}}` lines become Plotly figures between Markdown.

A figure line stands alone, at the top level of the text (not inside a list
or a code block). The text between figure lines is rendered and sanitised as
any statement is; the figure's slot is added after sanitising, so nothing the
lesson's author writes can produce raw HTML.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from labs.curriculum.markdown import render_markdown

log = logging.getLogger(__name__)

FIGURE_LINE = re.compile(r"^[ \t]*\{\{figure:([a-z0-9][a-z0-9-]*)\}\}[ \t]*$", re.MULTILINE)
Figure = dict[str, Any]


@dataclass
class LessonContext:
    """What a figure may draw from beyond its own module: the live workers' heartbeat documents."""

    workers: list[dict[str, Any]] = field(default_factory=list)

    def gpu_workers(self) -> list[dict[str, Any]]:
        """Live GPU workers that have measured their slice, those with the driver's device facts first."""
        found = [w for w in self.workers if w.get("backend") == "cuda" and w.get("ceilings")]
        return sorted(found, key=lambda w: (not w.get("device_facts"), str(w.get("name"))))


Builder = Callable[[LessonContext], Figure]
_BUILDERS: dict[str, Builder] = {}
_discovered = False


def lesson_figure(name: str) -> Callable[[Builder], Builder]:
    """Register a figure builder under `name`, the name a lesson's `{{figure:name}}` line uses."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
        raise ValueError(f"figure name {name!r}: use lowercase letters, digits and dashes")

    def register(builder: Builder) -> Builder:
        if name in _BUILDERS and _BUILDERS[name] is not builder:
            raise ValueError(f"figure {name!r} is registered twice")
        _BUILDERS[name] = builder
        return builder

    return register


def _discover() -> None:
    """Import every module of this package once, so their builders register themselves."""
    global _discovered
    if _discovered:
        return
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name != "registry":
            importlib.import_module(f"{__package__}.{info.name}")
    _discovered = True


def registered() -> set[str]:
    """Every figure name a lesson may use."""
    _discover()
    return set(_BUILDERS)


def figure_names(text: str) -> list[str]:
    """The figures a lesson's text names, in order."""
    return FIGURE_LINE.findall(text)


def unknown_figures(text: str) -> list[str]:
    """Figure names in the text that no builder registers (`sync_labs` refuses such a lesson)."""
    known = registered()
    return [name for name in figure_names(text) if name not in known]


@dataclass
class RenderedLesson:
    """Sanitised HTML with one empty `<figure>` slot per figure, and the figures to draw in them, in order."""

    html: str
    figures: list[dict[str, Any]] = field(default_factory=list)  # {"name", "slot", "figure"} or {"name", "error"}


def _build(name: str, context: LessonContext) -> Figure | None:
    builder = _BUILDERS.get(name)
    if builder is None:
        return None
    try:
        return builder(context)
    except Exception:  # a figure that cannot be built costs its slot, never the page
        log.exception("lesson figure %s failed", name)
        return None


def render_lesson(text: str, context: LessonContext | None = None) -> RenderedLesson:
    """The lesson as HTML and figures; a figure that fails or is unknown leaves a plain note in its slot."""
    _discover()
    context = context or LessonContext()
    parts = FIGURE_LINE.split(text)  # text, name, text, name, ..., text
    html: list[str] = []
    figures: list[dict[str, Any]] = []
    for index, part in enumerate(parts):
        if index % 2 == 0:
            if part.strip():
                html.append(render_markdown(part))
            continue
        slot = f"lesson-figure-{len(figures) + 1}"
        figure = _build(part, context)
        if figure is None:
            html.append(f'<p class="muted lesson-figure-missing">(figure {escape(part)} is not available)</p>')
            continue
        figures.append({"name": part, "slot": slot, "figure": figure})
        html.append(f'<figure class="lesson-figure" id="{slot}" data-figure="{escape(part)}"></figure>')
    return RenderedLesson(html="\n".join(html), figures=figures)


def source_note(text: str, limit: int = 150) -> dict[str, Any]:
    """The small grey line above a lesson figure that says where its numbers come from (a Plotly annotation)."""
    return {
        "text": text if len(text) < limit else text[: limit - 3] + "...",
        "xref": "paper",
        "yref": "paper",
        "x": 0,
        "y": 1.0,
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": 10, "color": "#666"},
    }
