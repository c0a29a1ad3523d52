"""Plotly figures as plain JSON, the very dicts `go.Figure(...).to_json()` gives, without Plotly's object model.

Plotly's graph objects validate every property through Python objects and deep copies: the job's three
occupancy graphs cost the engine 23 ms of CPU (and the job's first figure waited for them), the roofline
about 8 ms more, several times that on a GPU host whose cores a class keeps busy. Built as dicts they cost
well under a millisecond. `tests/gpu_worker/test_plain_figures.py` holds them to Plotly: each figure read
back by Plotly gives the same JSON, so every property here is one Plotly knows and writes this way.

The layout's template is Plotly's default one, as `to_json` writes it: made once per process, copied into
each figure (a figure's dicts are its own, whatever a caller does to them).
"""

from __future__ import annotations

import functools
import json
from typing import Any


def scatter(**properties: Any) -> dict[str, Any]:
    """A scatter trace (`go.Scatter(**properties)`)."""
    return {"type": "scatter", **properties}


def figure(data: list[dict[str, Any]], layout: dict[str, Any]) -> dict[str, Any]:
    """A figure: its traces and its layout, under Plotly's default template."""
    return {"data": data, "layout": {"template": json.loads(_template()), **layout}}


def vline(x: float, line: dict[str, Any], text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The shape and the annotation of `fig.add_vline(x=x, line=line, annotation_text=text)`."""
    shape = {"line": line, "type": "line", "x0": x, "x1": x, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain"}
    note = {"showarrow": False, "text": text, "x": x, "xanchor": "left", "xref": "x", "y": 1}
    return shape, {**note, "yanchor": "top", "yref": "y domain"}


@functools.cache
def _template() -> str:
    import plotly.io as pio
    from plotly.utils import PlotlyJSONEncoder

    return json.dumps(pio.templates[pio.templates.default].to_plotly_json(), cls=PlotlyJSONEncoder)
