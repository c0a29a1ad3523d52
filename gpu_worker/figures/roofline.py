"""The Roofline figure: log-log attainable FLOP/s against arithmetic intensity.

Memory roof from the slice's measured copy bandwidth, compute roofs for FP32
and the tensor cores, the datasheet roofs dashed beside them, and the points:
this submission, the learner's earlier ones joined by a dotted path from the
oldest to this one (a worked optimisation's steps), and the reference. Without a
timing (the simulator) only the intensity is known, drawn as a vertical line.
Every roof has its own legend entry (the memory roofs too), ticks read in SI
(100T, not 10^14), and the title is short with the source as its subtitle.
A kernel of 0 FLOP has no place on a log intensity axis: `bandwidth_figure`
marks it on the memory roof's own axis, bytes/s, instead.
"""

from __future__ import annotations

from typing import Any

from gpu_worker.figures import plain
from gpu_worker.figures.text import si, title, top_margin
from gpu_worker.protocol import RooflinePoint
from gpu_worker.science.datasheets import Datasheet
from gpu_worker.science.metrics import Ceilings

INTENSITY_RANGE = (1e-2, 1e4)


def _roof_trace(bandwidth: float, peak: float, name: str, dash: str, color: str) -> dict[str, Any]:
    # In log-log the roof is two straight pieces: three points draw it exactly.
    knee = min(max(peak / bandwidth, INTENSITY_RANGE[0]), INTENSITY_RANGE[1])
    x = [INTENSITY_RANGE[0], knee, INTENSITY_RANGE[1]]
    return plain.scatter(
        x=x, y=[min(peak, bandwidth * i) for i in x], mode="lines", name=name, line={"dash": dash, "color": color}
    )


def _memory_trace(bandwidth: float, peaks: list[float], name: str, dash: str, color: str) -> dict[str, Any]:
    """The slanted memory roof up to the highest compute roof's knee, as a legend entry of its own."""
    knee = min(max(max(peaks) / bandwidth, INTENSITY_RANGE[0]), INTENSITY_RANGE[1])
    x = [INTENSITY_RANGE[0], knee]
    return plain.scatter(
        x=x, y=[bandwidth * i for i in x], mode="lines", name=name, line={"dash": dash, "color": color, "width": 3}
    )


def _points_trace(points: list[RooflinePoint], name: str, marker: dict[str, Any]) -> dict[str, Any]:
    """Markers whose hover names each point (its label) and reads its intensity and rate."""
    return plain.scatter(
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
    traces: list[dict[str, Any]] = []
    if ceilings is not None:
        peaks = [ceilings.fp32, *([ceilings.bf16_tensor] if ceilings.bf16_tensor else [])]
        name = f"memory roof {si(ceilings.copy_bandwidth, 'B/s')} (measured)"
        traces.append(_memory_trace(ceilings.copy_bandwidth, peaks, name, "solid", "#ff7f0e"))
        traces.append(_roof_trace(ceilings.copy_bandwidth, ceilings.fp32, "FP32 roof (measured)", "solid", "#1f77b4"))
        if ceilings.bf16_tensor:
            traces.append(
                _roof_trace(
                    ceilings.copy_bandwidth, ceilings.bf16_tensor, "BF16 tensor roof (measured)", "solid", "#9467bd"
                )
            )
    if datasheet is not None:
        name = f"memory roof {si(datasheet.memory_bandwidth, 'B/s')} (datasheet)"
        peaks = [datasheet.fp32, datasheet.bf16_tensor]
        traces.append(_memory_trace(datasheet.memory_bandwidth, peaks, name, "dash", "#e6a15c"))
        traces.append(
            _roof_trace(datasheet.memory_bandwidth, datasheet.fp32, "FP32 roof (datasheet)", "dash", "#7f7f7f")
        )
        traces.append(
            _roof_trace(
                datasheet.memory_bandwidth, datasheet.bf16_tensor, "BF16 tensor roof (datasheet)", "dot", "#bcbd22"
            )
        )
    path = [*reversed(history or []), *(sizes or [])[-1:]]  # history is newest first; the path runs forward
    if len(path) > 1:  # a worked session's steps as one line across the roofline, oldest to this submission
        traces.append(
            plain.scatter(
                x=[p.intensity for p in path],
                y=[p.flop_rate for p in path],
                mode="lines",
                name="your path, oldest to this one",
                line={"color": "#aaaaaa", "dash": "dot", "width": 1.5},
                hoverinfo="skip",
            )
        )
    if history:
        traces.append(_points_trace(history, "your earlier submissions", {"color": "#aaaaaa", "size": 8}))
    if reference is not None:
        traces.append(_points_trace([reference], "reference", {"symbol": "diamond", "size": 11, "color": "#2ca02c"}))
    marks: dict[str, Any] = {}
    if sizes:
        if len(sizes) > 1:
            smaller = {"symbol": "star-open", "size": 10, "color": "#d62728"}
            traces.append(_points_trace(sizes[:-1], "this submission, smaller sizes", smaller))
        largest = {"symbol": "star", "size": 16, "color": "#d62728"}
        traces.append(_points_trace(sizes[-1:], "this submission", largest))
    elif intensity is not None:
        text = f"this kernel: {intensity:.3g} FLOP/byte (not timed)"
        shape, note = plain.vline(intensity, {"color": "#d62728", "dash": "dot"}, text)
        marks = {"shapes": [shape], "annotations": [note]}
    layout = dict(
        **marks,
        title=title("Roofline", source_label),
        showlegend=True,
        xaxis={
            "type": "log",
            "title": {"text": "arithmetic intensity (FLOP/byte)"},
            "range": [-2, 4],
            "exponentformat": "SI",
        },
        yaxis={"type": "log", "title": {"text": "attainable FLOP/s"}, "tickformat": "~s"},  # 1P, not 10^15
        legend={"orientation": "h", "y": -0.22, "yanchor": "top", "font": {"size": 11}},
        margin={"l": 60, "r": 20, "t": top_margin(source_label), "b": 40},
        height=560,
        meta={"source": source_label},
    )
    return plain.figure(traces, layout)


def bandwidth_figure(
    source_label: str,
    bytes_moved: float,
    ceilings: Ceilings | None = None,
    datasheet: Datasheet | None = None,
    *,
    sizes: list[tuple[str, float]] | None = None,
) -> dict[str, Any]:
    """A 0-FLOP kernel (a copy, a transpose) on the roofline's memory axis: bytes/s against the memory roofs.

    `sizes` are (label, measured bytes/s) per timed size, smallest first; without them (the simulator) the
    kernel is marked by what it moves per launch, not timed.
    """
    points = sizes or []
    count = max(len(points), 1)
    span = [-0.5, count - 0.5]
    traces: list[dict[str, Any]] = []
    if ceilings is not None:
        bw = ceilings.copy_bandwidth
        name = f"memory roof {si(bw, 'B/s')} (measured)"
        traces.append(plain.scatter(x=span, y=[bw, bw], mode="lines", name=name, line={"color": "#ff7f0e", "width": 3}))
    if datasheet is not None:
        bw = datasheet.memory_bandwidth
        traces.append(
            plain.scatter(
                x=span,
                y=[bw, bw],
                mode="lines",
                name=f"memory roof {si(bw, 'B/s')} (datasheet)",
                line={"color": "#e6a15c", "dash": "dash"},
            )
        )
    notes: list[dict[str, Any]] = []
    if points:
        traces.append(
            plain.scatter(
                x=list(range(len(points))),
                y=[rate for _, rate in points],
                text=[label for label, _ in points],
                mode="markers",
                name="this submission",
                marker={"symbol": "star", "size": 16, "color": "#d62728"},
                hovertemplate="%{text}<br>%{y:.3s}B/s<extra>this submission</extra>",
            )
        )
    else:
        text = f"this kernel: 0 FLOP, {si(bytes_moved, 'B')} moved per launch (not timed)"
        notes = [{"font": {"color": "#d62728"}, "showarrow": False, "text": text, "x": 0, "y": 0.5, "yref": "paper"}]
    labels = [label for label, _ in points] or ["this kernel"]
    layout = dict(
        **({"annotations": notes} if notes else {}),
        title=title("Roofline, memory axis (0 FLOP)", source_label),
        showlegend=True,
        xaxis={"tickvals": list(range(count)), "ticktext": labels, "range": span, "title": {"text": "size"}},
        yaxis={"title": {"text": "bytes/s"}, "tickformat": "~s", "ticksuffix": "B/s", "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.22, "yanchor": "top", "font": {"size": 11}},
        margin={"l": 70, "r": 20, "t": top_margin(source_label), "b": 40},
        height=480,
        meta={"source": source_label},
    )
    return plain.figure(traces, layout)
