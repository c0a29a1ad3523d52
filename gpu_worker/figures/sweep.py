"""The sweep figure: a measured quantity against the parameter an exercise varies across its GPU sizes.

An exercise's GPU sizes are the sweep's points (the engine already runs, checks
and times each one, `exercise.plan.runs`); `lab.yaml`'s `sweep` says what to put on
each axis: `x`, a formula of the sizes (a working set in bytes, `n`), and `y`,
one of the measured figures (`ns_per`: the median time over the formula `per`,
e.g. nanoseconds per dependent load; `bandwidth_pct`: % of the slice's copy
bandwidth; `gbps`: GB/s). With `x_measured: resident_warps` the x of a size is
the warps per SM the driver let the compiled kernel keep resident there (its
registers may allow fewer than the formula's). Only timed, correct sizes are drawn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from gpu_worker.exercise.formula import number_value
from gpu_worker.protocol import SweepSpec
from gpu_worker.science.occupancy import resident_warps


def sweep_points(
    sweep: SweepSpec,
    metrics: Mapping[int, Mapping[str, Any]],
    occupancies: Mapping[int, Mapping[str, Any]] | None = None,
) -> list[tuple[float, float]]:
    """(x, y) per timed size, in order of x (a lab may list its sizes in another order: the first is the one
    the occupancy calculator reads)."""
    points = []
    for index in sorted(metrics):
        m = metrics[index]
        sizes, seconds = m.get("sizes") or {}, m.get("median_seconds")
        if not seconds:
            continue
        measured = resident_warps((occupancies or {}).get(index)) if sweep.x_measured == "resident_warps" else None
        x = measured if measured is not None else number_value(sweep.x, sizes)
        if sweep.y == "ns_per":
            y = 1e9 * seconds / number_value(sweep.per, sizes)
        elif sweep.y == "bandwidth_pct":
            if m.get("bandwidth_pct") is None:
                continue
            y = float(m["bandwidth_pct"])
        else:
            y = float(m.get("bandwidth") or 0) / 1e9
        points.append((x, y))
    return sorted(points)


def sweep_figure(
    sweep: SweepSpec,
    metrics: Mapping[int, Mapping[str, Any]],
    label: str,
    occupancies: Mapping[int, Mapping[str, Any]] | None = None,
) -> dict[str, Any] | None:
    """The curve, or None with fewer than two timed sizes (a point is not a curve)."""
    points = sweep_points(sweep, metrics, occupancies)
    if len(points) < 2:
        return None
    fig = go.Figure(
        go.Scatter(
            x=[p[0] for p in points],
            y=[p[1] for p in points],
            mode="lines+markers",
            name="this submission",
            marker={"size": 10, "color": "#d62728"},
            hovertemplate="%{x:.3s}: %{y:.3g}<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": f"{sweep.title} · {label}"},
        xaxis={"type": "log" if sweep.log_x else "linear", "title": sweep.x_title, "tickformat": ".2s"},
        yaxis={"title": sweep.y_title, "rangemode": "tozero"},
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        meta={"source": label},
    )
    return json.loads(fig.to_json())


def block_sweep_figure(points: list[dict[str, Any]], ended: str, label: str) -> dict[str, Any] | None:
    """The learner's kernel across block sizes at the largest size: bandwidth and resident warps per SM against
    threads per block, their own choice starred. `points` come from `GpuReport.block_sweep`; `ended` is the
    runtime error that stopped the sweep, if one did. None with fewer than two timed points."""
    timed = [p for p in points if p["median_seconds"]]
    if len(timed) < 2:
        return None
    as_pct = all(p["bandwidth_pct"] is not None for p in timed)
    y = [float(p["bandwidth_pct"]) if as_pct else float(p["bandwidth"] or 0) / 1e9 for p in timed]
    blocks = [p["block"] for p in timed]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=blocks,
            y=y,
            mode="lines+markers",
            name="% of the copy roof" if as_pct else "GB/s",
            marker={"size": 9, "color": "#1f77b4"},
            hovertemplate="%{x} threads: %{y:.3g}<extra></extra>",
        )
    )
    warps = [(p["block"], p["resident_warps"]) for p in timed if p["resident_warps"] is not None]
    if warps:
        fig.add_trace(
            go.Scatter(
                x=[w[0] for w in warps],
                y=[w[1] for w in warps],
                yaxis="y2",
                mode="lines+markers",
                name="resident warps per SM (driver)",
                line={"dash": "dot", "color": "#7f7f7f"},
                hovertemplate="%{x} threads: %{y} warps per SM<extra></extra>",
            )
        )
    chosen = [(b, v) for b, v, p in zip(blocks, y, timed, strict=True) if p["chosen"]]
    if chosen:
        fig.add_trace(
            go.Scatter(
                x=[chosen[0][0]],
                y=[chosen[0][1]],
                mode="markers",
                name="your launch",
                marker={"symbol": "star", "size": 16, "color": "#d62728"},
                hovertemplate="your launch, %{x} threads: %{y:.3g}<extra></extra>",
            )
        )
    notes = [f"wrong output at {p['block']} threads: not drawn" for p in points if not p["correct"]]
    if ended:
        notes.append(f"the sweep stopped {ended}"[:160])
    if any(p["shared_gpu"] for p in timed):
        notes.append("shared GPU: indicative")
    fig.update_layout(
        title={"text": f"Your kernel across block sizes · {label}"},
        xaxis={"type": "log", "title": "threads per block", "tickvals": blocks, "ticktext": [str(b) for b in blocks]},
        yaxis={"title": "% of the slice's copy bandwidth" if as_pct else "GB/s", "rangemode": "tozero"},
        yaxis2={"title": "resident warps per SM", "overlaying": "y", "side": "right", "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 60, "r": 60, "t": 50, "b": 90},
        annotations=[{"text": "<br>".join(notes), "xref": "paper", "yref": "paper", "x": 0, "y": 1, "showarrow": False}]
        if notes
        else [],
        meta={"source": label, "points": points},
    )
    return json.loads(fig.to_json())
