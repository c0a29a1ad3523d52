"""The Roofline figure: log-log attainable FLOP/s against arithmetic intensity.

Memory roof from the slice's measured copy bandwidth, compute roofs for FP32
and the tensor cores, the datasheet roofs dashed beside them, and the points:
this submission, the learner's earlier ones and the reference. Without a
timing (the simulator) only the intensity is known, drawn as a vertical line.
"""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go

from gpu_worker.datasheets import Datasheet
from gpu_worker.metrics import Ceilings
from gpu_worker.protocol import RooflinePoint

INTENSITY_RANGE = (1e-2, 1e4)


def _roof_trace(bandwidth: float, peak: float, name: str, dash: str, color: str) -> go.Scatter:
    # In log-log the roof is two straight pieces: three points draw it exactly.
    knee = min(max(peak / bandwidth, INTENSITY_RANGE[0]), INTENSITY_RANGE[1])
    x = [INTENSITY_RANGE[0], knee, INTENSITY_RANGE[1]]
    return go.Scatter(
        x=x, y=[min(peak, bandwidth * i) for i in x], mode="lines", name=name, line={"dash": dash, "color": color}
    )


def _points_trace(points: list[RooflinePoint], name: str, marker: dict[str, Any]) -> go.Scatter:
    """Markers whose hover names each point (its label) and reads its intensity and rate."""
    return go.Scatter(
        x=[p.intensity for p in points],
        y=[p.flop_rate for p in points],
        text=[p.label for p in points],
        mode="markers",
        name=name,
        marker=marker,
        hovertemplate="%{text}<br>%{x:.3g} FLOP/byte<br>%{y:.3s}FLOP/s<extra>" + name + "</extra>",
    )


def roofline_figure(
    source_label: str,
    intensity: float | None,
    ceilings: Ceilings | None = None,
    datasheet: Datasheet | None = None,
    *,
    sizes: list[RooflinePoint] | None = None,
    history: list[RooflinePoint] | None = None,
    reference: RooflinePoint | None = None,
) -> dict[str, Any]:
    """A Plotly figure as JSON; `source_label` says which device, slice and backend it came from.

    `sizes` are this submission's timed sizes, smallest first: the last, which fills
    the GPU best, is "this submission". Without them only `intensity` is drawn.
    `history` and `reference` are drawn as given: the caller keeps them to this device.
    """
    fig = go.Figure()
    if ceilings is not None:
        fig.add_trace(_roof_trace(ceilings.copy_bandwidth, ceilings.fp32, "FP32 roof (measured)", "solid", "#1f77b4"))
        if ceilings.bf16_tensor:
            fig.add_trace(
                _roof_trace(
                    ceilings.copy_bandwidth, ceilings.bf16_tensor, "BF16 tensor roof (measured)", "solid", "#9467bd"
                )
            )
    if datasheet is not None:
        fig.add_trace(
            _roof_trace(datasheet.memory_bandwidth, datasheet.fp32, "FP32 roof (datasheet)", "dash", "#7f7f7f")
        )
        fig.add_trace(
            _roof_trace(
                datasheet.memory_bandwidth, datasheet.bf16_tensor, "BF16 tensor roof (datasheet)", "dot", "#bcbd22"
            )
        )
    if history:
        fig.add_trace(_points_trace(history, "your earlier submissions", {"color": "#aaaaaa", "size": 8}))
    if reference is not None:
        fig.add_trace(_points_trace([reference], "reference", {"symbol": "diamond", "size": 11, "color": "#2ca02c"}))
    if sizes:
        if len(sizes) > 1:
            smaller = {"symbol": "star-open", "size": 10, "color": "#d62728"}
            fig.add_trace(_points_trace(sizes[:-1], "this submission, smaller sizes", smaller))
        largest = {"symbol": "star", "size": 16, "color": "#d62728"}
        fig.add_trace(_points_trace(sizes[-1:], "this submission", largest))
    elif intensity is not None:
        fig.add_vline(
            x=intensity,
            line={"color": "#d62728", "dash": "dot"},
            annotation_text=f"this kernel: {intensity:.3g} FLOP/byte (not timed)",
        )
    fig.update_layout(
        title={"text": f"Roofline · {source_label}"},
        xaxis={"type": "log", "title": "arithmetic intensity (FLOP/byte)", "range": [-2, 4]},
        yaxis={"type": "log", "title": "attainable FLOP/s"},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 60, "r": 20, "t": 50, "b": 40},
        meta={"source": source_label},
    )
    return json.loads(fig.to_json())
