"""Module 2's figures: sectors per warp request against stride, bank-conflict ways against padding, and latency
hiding (bandwidth against resident warps) by Little's law.

The first two are computed from the hardware's rules, the same rules the simulator's
memory trace applies (`gpu_worker.science.memtrace_report`): global memory moves
32-byte sectors; shared memory has 32 banks of 4-byte words. The third is
Little's law over an H200's datasheet bandwidth and an assumed loaded latency.
They are models, labelled so; the exercises measure the learner's own kernel
against them (the occupancy exercise draws the measured curve).
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import plotly.graph_objects as go

from gpu_worker.science.datasheets import DATASHEETS
from gpu_worker.science.memtrace_report import BANKS, SECTOR_BYTES, WARP_SIZE
from labs.curriculum.lessons.registry import LessonContext, lesson_figure, source_note

MODEL_NOTE = "computed from the 32-byte sector and 32-bank rules (a model, not a measurement)"
H200_SMS = 132
# An HBM load's latency on Hopper, order of magnitude (module 1's staircase measures it): with it the model gives
# vector-add (8 bytes in flight per thread, 64 warps) 75% of the bandwidth, where an H200 measured 71%.
LOADED_LATENCY_S = 0.6e-6
LITTLE_NOTE = (
    "Little's law over the H200 datasheet's 4.8 TB/s, 132 SMs and an assumed 0.6 us latency "
    "(a model, not a measurement)"
)


def sectors_per_request(stride: int, itemsize: int = 4) -> int:
    """Distinct 32-byte sectors a warp touches when lane k reads element k * stride (aligned start)."""
    return len({(lane * stride * itemsize) // SECTOR_BYTES for lane in range(WARP_SIZE)})


def bank_ways(row_words: int) -> int:
    """Passes a warp needs to read one column of a float tile whose rows are `row_words` words long."""
    banks: dict[int, set[int]] = defaultdict(set)
    for lane in range(WARP_SIZE):
        word = lane * row_words
        banks[word % BANKS].add(word)
    return max(len(words) for words in banks.values())


def bandwidth_percent(warps_per_sm: int, loads_in_flight: int, load_bytes: int = 4) -> float:
    """% of an H200's HBM bandwidth that `warps_per_sm` warps keep busy with that many loads in flight per thread."""
    needed = DATASHEETS["H200"].memory_bandwidth * LOADED_LATENCY_S / H200_SMS  # bytes in flight per SM
    return min(100.0, 100 * warps_per_sm * WARP_SIZE * loads_in_flight * load_bytes / needed)


def _layout(
    fig: go.Figure, title: str, xaxis: dict[str, Any], yaxis: dict[str, Any], note: str = MODEL_NOTE
) -> dict[str, Any]:
    fig.update_layout(
        title={"text": title},
        xaxis=xaxis,
        yaxis=yaxis,
        margin={"l": 60, "r": 20, "t": 60, "b": 50},
        annotations=[source_note(note, limit=10_000)],
        meta={"source": note},
    )
    return json.loads(fig.to_json())


@lesson_figure("coalescing-stride")
def stride(context: LessonContext) -> dict[str, Any]:
    """Sectors per request and useful fraction of the bytes moved, for float loads at strides 1 to 32."""
    strides = list(range(1, 33))
    sectors = [sectors_per_request(s) for s in strides]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=strides, y=sectors, mode="lines+markers", name="sectors per warp request"))
    fig.add_trace(
        go.Scatter(
            x=strides,
            y=[100 * 4 / s for s in sectors],
            mode="lines",
            name="useful bytes (% of moved)",
            yaxis="y2",
            line={"dash": "dot"},
        )
    )
    fig.update_layout(
        yaxis2={"overlaying": "y", "side": "right", "title": "% useful", "range": [0, 105]},
        legend={"orientation": "h", "y": -0.25},
    )
    return _layout(
        fig,
        "A warp's float load: sectors per request against stride",
        {"title": "stride between neighbouring threads (elements)"},
        {"title": "sectors per request", "range": [0, 34]},
    )


@lesson_figure("bank-padding")
def padding(context: LessonContext) -> dict[str, Any]:
    """Ways of conflict for reading a column of a 32-row float tile, against the row length in words."""
    widths = list(range(28, 41))
    fig = go.Figure(
        go.Bar(
            x=[str(w) for w in widths],
            y=[bank_ways(w) for w in widths],
            text=[f"{bank_ways(w)}-way" for w in widths],
            marker={"color": ["#d62728" if bank_ways(w) > 1 else "#2ca02c" for w in widths]},
        )
    )
    return _layout(
        fig,
        "Reading a tile's column: bank-conflict ways against row length",
        {"title": "row length in 4-byte words ([32][w] tile): 32 conflicts, 33 does not", "type": "category"},
        {"title": "passes per warp request (ways)", "type": "log"},
    )


@lesson_figure("latency-hiding")
def latency_hiding(context: LessonContext) -> dict[str, Any]:
    """Bandwidth against resident warps per SM, for 1, 4 and 16 independent 4-byte loads in flight per thread."""
    warps = list(range(4, 65, 4))
    fig = go.Figure()
    for loads in (1, 4, 16):
        fig.add_trace(
            go.Scatter(
                x=warps,
                y=[bandwidth_percent(w, loads) for w in warps],
                mode="lines+markers",
                name=f"{loads} load{'s' if loads > 1 else ''} in flight per thread",
            )
        )
    fig.update_layout(legend={"orientation": "h", "y": -0.25})
    return _layout(
        fig,
        "Latency hiding: warps x loads in flight against bandwidth",
        {"title": "resident warps per SM (64 = 100% occupancy)", "range": [0, 66]},
        {"title": "% of HBM bandwidth kept busy", "range": [0, 105]},
        LITTLE_NOTE,
    )
