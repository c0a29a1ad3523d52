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

INTENSITY_RANGE = (1e-2, 1e4)


def _roof_trace(bandwidth: float, peak: float, name: str, dash: str, color: str) -> go.Scatter:
    # In log-log the roof is two straight pieces: three points draw it exactly.
    knee = min(max(peak / bandwidth, INTENSITY_RANGE[0]), INTENSITY_RANGE[1])
    x = [INTENSITY_RANGE[0], knee, INTENSITY_RANGE[1]]
    return go.Scatter(
        x=x, y=[min(peak, bandwidth * i) for i in x], mode="lines", name=name, line={"dash": dash, "color": color}
    )


def roofline_figure(
    source_label: str,
    intensity: float | None,
    achieved: float | None = None,
    ceilings: Ceilings | None = None,
    datasheet: Datasheet | None = None,
    earlier: list[tuple[float, float]] | None = None,
    reference: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """A Plotly figure as JSON; `source_label` says which device, slice and backend it came from."""
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
    if earlier:
        fig.add_trace(
            go.Scatter(
                x=[p[0] for p in earlier],
                y=[p[1] for p in earlier],
                mode="markers",
                name="your earlier runs",
                marker={"color": "#aaaaaa", "size": 8},
            )
        )
    if reference is not None:
        fig.add_trace(
            go.Scatter(
                x=[reference[0]],
                y=[reference[1]],
                mode="markers",
                name="reference",
                marker={"symbol": "diamond", "size": 11, "color": "#2ca02c"},
            )
        )
    if intensity is not None and achieved is not None:
        fig.add_trace(
            go.Scatter(
                x=[intensity],
                y=[achieved],
                mode="markers",
                name="this submission",
                marker={"symbol": "star", "size": 16, "color": "#d62728"},
            )
        )
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
