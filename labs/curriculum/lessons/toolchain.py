"""Module 4's figures: softmax's bytes per element at each rung (a model), and the ladder measured on a GPU.

The traffic figure is arithmetic on the kernels' passes, labelled a model. The
measured figure reads the newest committed `bench/results/*-softmax-ladder.json`
(bench/softmax_ladder.py, the module's own reference kernels against CuPy's
library composition), titled with its device and date, or says "not yet measured".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from gpu_worker.science.datasheets import datasheet_for
from labs.curriculum.lessons.registry import LessonContext, lesson_figure

RESULTS = Path(__file__).resolve().parents[3] / "bench" / "results"
MODEL_NOTE = "a model: bytes each pass moves if a row is not cached, at the H200's datasheet bandwidth"
# (rung, global-memory bytes per element when every pass over the row goes to DRAM)
TRAFFIC = [
    ("three passes (max, sum, normalise)", 16),  # read x three times, write y
    ("online: two passes", 12),  # read x twice, write y
    ("row in registers: one pass (Triton's one block per row)", 8),  # read x once, write y once
]
ROWS, COLS = 16384, 4096


def _layout(fig: go.Figure, title: str, source: str) -> dict[str, Any]:
    fig.update_layout(
        title={"text": f"{title} · {source}"},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 60, "r": 20, "t": 60, "b": 40},
        meta={"source": source},
    )
    return json.loads(fig.to_json())


@lesson_figure("toolchain-softmax-traffic")
def softmax_traffic(context: LessonContext) -> dict[str, Any]:
    """Bytes per element and the time they would take at the memory roof, per softmax rung."""
    sheet = datasheet_for("NVIDIA H200")
    bandwidth = sheet.memory_bandwidth if sheet is not None else 4.8e12
    names = [name for name, _ in TRAFFIC]
    fig = go.Figure(
        go.Bar(
            x=names,
            y=[b * ROWS * COLS / bandwidth * 1e6 for _, b in TRAFFIC],
            text=[f"{b} B/element" for _, b in TRAFFIC],
            textposition="outside",
        )
    )
    fig.update_layout(yaxis={"title": f"microseconds at the memory roof, {ROWS} x {COLS} floats"})
    return _layout(fig, "Softmax: traffic per rung", MODEL_NOTE)


def newest_ladder() -> dict[str, Any] | None:
    for path in sorted(RESULTS.glob("*-softmax-ladder.json"), reverse=True):
        try:
            document = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if document.get("results"):
            return {**document, "file": f"bench/results/{path.name}"}
    return None


@lesson_figure("toolchain-softmax-measured")
def softmax_measured(context: LessonContext) -> dict[str, Any]:
    """The module's softmax kernels and CuPy's library composition, timed on a GPU."""
    title = "Softmax at each rung, measured"
    document = newest_ladder()
    if document is None:
        fig = go.Figure()
        fig.add_annotation(text="not yet measured: run bench/softmax_ladder.py on a GPU", showarrow=False)
        return _layout(fig, title, "not yet measured")
    fig = go.Figure()
    sizes = sorted({(r["rows"], r["cols"]) for r in document["results"]})
    for rows, cols in sizes:
        picked = [r for r in document["results"] if (r["rows"], r["cols"]) == (rows, cols)]
        fig.add_trace(
            go.Bar(
                x=[r["rung"] for r in picked],
                y=[r["bandwidth_gbs"] for r in picked],
                name=f"{rows} x {cols}",
                text=[f"{r['median_us']:.0f} us" for r in picked],
                textposition="outside",
            )
        )
    fig.update_layout(barmode="group", yaxis={"title": "GB/s counting 8 bytes per element"})
    source = f"measured on {document['device']}, {document['date'][:10]} ({document['file']})"
    return _layout(fig, title, source)
