"""Module 1's figures: the machine you are on, drawn as its memory hierarchy beside three datasheet GPUs."""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go

from labs.curriculum.lessons.machines import DATASHEET_MACHINES, Machine, machine_from_heartbeat
from labs.curriculum.lessons.registry import LessonContext, lesson_figure, source_note

COLORS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd")


def _machines(context: LessonContext) -> tuple[list[Machine], str]:
    """The live slice first (when a GPU worker reports its facts), then the datasheet machines; and a note."""
    live = [m for m in (machine_from_heartbeat(b) for b in context.gpu_workers()) if m is not None]
    if live:
        return [live[0], *DATASHEET_MACHINES], f"this machine: {live[0].source}; others: datasheets"
    return list(DATASHEET_MACHINES), "no GPU worker is live now, so only datasheet machines are drawn"


def _size(value: float | None) -> str:
    if not value:
        return "n/a"
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


@lesson_figure("silicon-hierarchy")
def hierarchy(context: LessonContext) -> dict[str, Any]:
    """Capacity of each level, chip-wide, on a log axis: each step down is larger and slower."""
    machines, note = _machines(context)
    fig = go.Figure()
    for machine, color in zip(machines, COLORS, strict=False):
        levels = machine.levels()
        names = [k for k, v in levels.items() if v]
        fig.add_trace(
            go.Bar(
                x=names,
                y=[levels[k] for k in names],
                name=f"{machine.name} ({'live' if 'worker' in machine.source else 'datasheet'})",
                marker={"color": color},
                text=[_size(levels[k]) for k in names],
                hovertemplate="%{x}: %{text}<extra>" + machine.name + "</extra>",
            )
        )
    fig.update_layout(
        title={"text": "Memory hierarchy, whole chip (capacity, log scale)"},
        barmode="group",
        yaxis={"type": "log", "title": "bytes", "tickformat": ".2s"},
        legend={"orientation": "h", "y": -0.2},
        margin={"l": 60, "r": 20, "t": 50, "b": 40},
        annotations=[source_note(note, limit=10_000)],
        meta={"source": note},
    )
    return json.loads(fig.to_json())


def _rows(machine: Machine) -> list[str]:
    per_unit = machine.l1_shared_bytes_per_unit
    return [
        f"{machine.units} {machine.unit_word}s",
        f"{machine.warp_size} threads",
        str(machine.max_threads_per_unit or "n/a"),
        _size(machine.register_bytes_per_unit),
        _size(machine.shared_bytes_per_unit) + (f" (of {_size(per_unit)} with L1)" if per_unit else ""),
        _size(machine.l2_bytes)
        + (f" + {_size(machine.last_level_bytes)} Infinity Cache" if machine.last_level_bytes else ""),
        _size(machine.memory_bytes),
        f"{machine.memory_bandwidth / 1e12:.2f} TB/s" if machine.memory_bandwidth else "n/a",
        f"{machine.clock_mhz} MHz" if machine.clock_mhz else "n/a",
        machine.source,
    ]


@lesson_figure("silicon-machines")
def machines_table(context: LessonContext) -> dict[str, Any]:
    """The same facts as a table: the machine you are on (when live) beside A100, H100 and MI300X."""
    machines, note = _machines(context)
    labels = [
        "SMs / CUs",
        "warp (wavefront)",
        "threads per SM / CU",
        "registers per SM / CU",
        "shared memory per SM / CU",
        "L2 (and last level)",
        "HBM",
        "HBM bandwidth",
        "clock (boost)",
        "numbers from",
    ]
    fig = go.Figure(
        go.Table(
            header={"values": ["", *(m.name for m in machines)], "align": "left", "fill": {"color": "#eee"}},
            cells={"values": [labels, *(_rows(m) for m in machines)], "align": "left", "height": 24},
        )
    )
    fig.update_layout(
        title={"text": "The machine you are on, beside three datasheets"},
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        height=360,
        meta={"source": note},
    )
    return json.loads(fig.to_json())
