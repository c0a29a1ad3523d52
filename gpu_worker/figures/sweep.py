"""The sweep figure: a measured quantity against the parameter an exercise varies across its GPU sizes.

An exercise's GPU sizes are the sweep's points (the engine already runs, checks
and times each one, `engine._runs`); `lab.yaml`'s `sweep` says what to put on
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


def resident_warps(occupancy: Mapping[str, Any] | None) -> float | None:
    """Warps per SM the driver keeps resident, from the cuda backend's per-size occupancy; None if not measured."""
    blocks, threads = (occupancy or {}).get("driver_blocks_per_sm"), (occupancy or {}).get("threads_per_block")
    if blocks is None or not threads:
        return None
    return float(int(blocks) * -(-int(threads) // 32))


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
