"""The figures' shared words: a title that fits a phone (source as a wrapped subtitle) and SI numbers."""

from __future__ import annotations

import textwrap
from typing import Any

SUBTITLE_CHARS = 46  # about 300 px at 11 px: fits a 390 px phone beside the plot's margins


def si(value: float, unit: str) -> str:
    """4.8e12, "B/s" -> "4.8 TB/s": the figures' one number format, as their SI ticks read."""
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def title(text: str, subtitle: str) -> dict[str, Any]:
    """A short title, and the subtitle (where the numbers came from) wrapped onto lines that fit."""
    lines = textwrap.wrap(subtitle, SUBTITLE_CHARS) or [""]
    return {
        "text": text,
        "font": {"size": 15},
        "subtitle": {"text": "<br>".join(lines), "font": {"size": 11}},
        "x": 0.02,
        "xanchor": "left",
    }


def top_margin(subtitle: str) -> int:
    """Room above the plot for the title and every subtitle line."""
    return 52 + 14 * max(1, len(textwrap.wrap(subtitle, SUBTITLE_CHARS)))
