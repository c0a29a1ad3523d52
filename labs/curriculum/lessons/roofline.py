"""Module 3's figures: the roofline of the slice you would run on, with the course's kernels placed by intensity.

The roofs are the live GPU worker's measured ceilings when one is serving, and
the H200 and H100 datasheets beside them (dashed); the kernels are placed by
their arithmetic intensity alone (FLOPs over compulsory bytes, formulas from
their lab.yaml), as vertical lines: where a kernel can land, not where it did.
"""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go

from gpu_worker.science.datasheets import DATASHEETS
from labs.curriculum.lessons.registry import LessonContext, lesson_figure

X_RANGE = (1e-2, 1e3)
#: (name, FLOP per byte) from each module-1-to-3 exercise's declared work (lab.yaml), float32 unless named.
KERNELS = (
    ("vector add: 1/12", 1 / 12),
    ("saxpy: 2/12", 2 / 12),
    ("fusion: 3/12", 3 / 12),
    ("stencil: 3/8", 3 / 8),
    ("float16 dot: 2/4", 2 / 4),
    ("matmul, n = 4096: n/6", 4096 / 6),
)


def _roof(bandwidth: float, peak: float, name: str, dash: str, color: str) -> go.Scatter:
    knee = min(max(peak / bandwidth, X_RANGE[0]), X_RANGE[1])
    x = [X_RANGE[0], knee, X_RANGE[1]]
    return go.Scatter(
        x=x, y=[min(peak, bandwidth * i) for i in x], mode="lines", name=name, line={"dash": dash, "color": color}
    )


@lesson_figure("roofline-kernels")
def kernels(context: LessonContext) -> dict[str, Any]:
    fig = go.Figure()
    live = context.gpu_workers()
    notes = []
    if live:
        c = live[0]["ceilings"]
        fig.add_trace(
            _roof(
                c["copy_bytes_per_s"],
                c["fp32_flops"],
                f"FP32 roof, {live[0].get('device')} (measured)",
                "solid",
                "#1f77b4",
            )
        )
        notes.append(f"measured on worker {live[0].get('name')}")
    for key, color in (("H200", "#7f7f7f"), ("H100", "#bcbd22")):
        sheet = DATASHEETS[key]
        fig.add_trace(_roof(sheet.memory_bandwidth, sheet.fp32, f"FP32 roof, {sheet.name}", "dash", color))
    notes.append("dashed roofs: datasheets; vertical lines: each kernel's declared FLOP/byte")
    for name, intensity in KERNELS:
        fig.add_vline(
            x=intensity,
            line={"color": "#d62728", "dash": "dot"},
            annotation_text=name,
            annotation_textangle=-90,
            annotation_position="bottom right",
        )
    fig.update_layout(
        title={"text": "Roofline: where each kernel can land"},
        xaxis={"type": "log", "title": "arithmetic intensity (FLOP/byte)", "range": [-2, 3]},
        yaxis={"type": "log", "title": "attainable FLOP/s", "tickformat": ".2s"},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 60, "r": 20, "t": 50, "b": 40},
        meta={"source": "; ".join(notes)},
    )
    return json.loads(fig.to_json())
