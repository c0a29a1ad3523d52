"""Module 4's figures: softmax's bytes per element at each rung (a model), and the ladder measured on a GPU.

The traffic figure is arithmetic on the kernels' passes, labelled a model. The
measured figures read the newest committed `bench/results/*-softmax-ladder.json`
(bench/softmax_ladder.py: the module's own CUDA C++ reference kernels, Triton, Helion,
the CUTLASS DSL and two library calls), titled with its device, date and commit, or
say "not yet measured". The ladder figure draws every rung the document names, a rung
that could not run as such, with its reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

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


def newest_ladder(key: str = "results") -> dict[str, Any] | None:
    """The newest committed ladder document with a non-empty `key` ("results": timings; "rungs": the rungs tried)."""
    for path in sorted(RESULTS.glob("*-softmax-ladder.json"), reverse=True):
        try:
            document = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(document, dict) and document.get(key):
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


def _not_measured(title: str) -> dict[str, Any]:
    fig = go.Figure()
    fig.add_annotation(
        text="no measurement yet: bench/softmax_ladder.py has not been run on a GPU and committed",
        showarrow=False,
    )
    fig.update_layout(xaxis={"visible": False}, yaxis={"visible": False})
    return _layout(fig, title, "not yet measured")


@lesson_figure("toolchain-ladder")
def softmax_ladder(context: LessonContext) -> dict[str, Any]:
    """Each rung's time, lines of code and % of the memory roof on the largest size, bottom rung first."""
    title = "The ladder, measured: one softmax at each rung"
    document = newest_ladder("rungs")
    if document is None:
        return _not_measured(title)
    results = document.get("results") or []
    rows, cols = max({(r["rows"], r["cols"]) for r in results}, key=lambda size: size[0] * size[1], default=(0, 0))
    timed = {r["rung"]: r for r in results if (r["rows"], r["cols"]) == (rows, cols)}
    rungs = document["rungs"]
    names = [r["rung"] for r in rungs]
    fig = make_subplots(
        rows=1,
        cols=3,
        shared_yaxes=True,
        horizontal_spacing=0.04,
        column_widths=[0.45, 0.2, 0.35],
        subplot_titles=[
            f"median time (us), {rows} x {cols} floats" if timed else "median time (us)",
            "lines of code",
            "% of the roof",
        ],  # fmt: skip
    )
    panels = [
        ([timed[n]["median_us"] if n in timed else None for n in names], "{:.0f} us"),
        ([r.get("loc") for r in rungs], "{}"),
        ([timed[n]["roof_pct"] if n in timed else None for n in names], "{:.0f}%"),
    ]
    for column, (values, label) in enumerate(panels, start=1):
        fig.add_trace(
            go.Bar(
                y=names,
                x=values,
                orientation="h",
                text=[label.format(v) if v is not None else "" for v in values],
                textposition="auto",
                textangle=0,  # a short bar's label beside it, not turned on its side
                showlegend=False,
            ),
            row=1,
            col=column,
        )
    for rung in rungs:
        if rung["rung"] not in timed:  # not runnable, failed or wrong: said on its row, never left out
            why = f"{rung['status']}: {rung.get('why', '')}"
            fig.add_annotation(
                x=0,
                y=rung["rung"],
                xref="x",
                yref="y",
                xanchor="left",
                showarrow=False,
                text=why if len(why) < 90 else why[:87] + "...",
                hovertext=why,
                font={"size": 10, "color": "#a33"},
            )
    roof = document.get("roof") or {}
    measured = f"measured on {document['device']}, {document['date'][:10]}, commit {document.get('commit') or '?'}"
    against = f"roof {roof.get('bytes_per_s', 0) / 1e9:.0f} GB/s: {roof.get('source', 'unknown')}"
    source = f"{measured} ({document['file']}); {against}"
    roofs = [v for v in panels[2][0] if v is not None]
    fig.update_xaxes(range=[0, max([100.0, *roofs]) * 1.05], row=1, col=3)  # the roof is 100%
    fig.update_layout(
        title={"text": f"{title}<br><sup>{measured} ({document['file']})<br>{against}</sup>"},  # the source is long
        height=180 + 45 * len(rungs),
        margin={"l": 60, "r": 20, "t": 120, "b": 40},
        meta={"source": source},
        yaxis={"categoryorder": "array", "categoryarray": names},
    )
    return json.loads(fig.to_json())
