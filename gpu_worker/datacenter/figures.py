"""Plotly figures of simulated schedules: utilisation over time, the JCT distribution, fairness, the ranking.

Each entry is `{"title", "figure"}` as the other figures of a run are, and
every title and `layout.meta.source` says the numbers come from a model on a
synthetic trace, not from a cluster.
"""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go

from gpu_worker.datacenter.metrics import Metrics, utilisation_steps
from gpu_worker.datacenter.simulate import Schedule
from gpu_worker.datacenter.trace import TraceJob

MODEL_LABEL = "scheduling model on the CPU, synthetic trace: modelled, not measured"
YOURS = "your policy"
COLOURS = {
    YOURS: "#d62728",
    "fifo": "#7f7f7f",
    "sjf": "#1f77b4",
    "gang": "#9467bd",
    "easy": "#8c564b",
    "tiresias": "#2ca02c",
    "gandiva": "#ff7f0e",
}


def entry(title: str, fig: go.Figure) -> dict[str, Any]:
    fig.update_layout(
        title={"text": f"{title} · {MODEL_LABEL}"},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 60, "r": 20, "t": 50, "b": 40},
        meta={"source": MODEL_LABEL},
    )
    return {"title": f"{title} · model", "figure": json.loads(fig.to_json())}


def utilisation_figure(schedules: dict[str, Schedule], gpus: int, unit: str = "GPUs") -> dict[str, Any]:
    """The busy fraction of the cluster over time, one step line per policy."""
    fig = go.Figure()
    for name, schedule in schedules.items():
        times, fractions = utilisation_steps(schedule, gpus)
        fig.add_trace(
            go.Scatter(
                x=[t / 60 for t in times],
                y=[100 * f for f in fractions],
                mode="lines",
                line={"shape": "hv", "color": COLOURS.get(name), "width": 3 if name == YOURS else 1.5},
                name=name,
            )
        )
    fig.update_layout(xaxis={"title": "hours"}, yaxis={"title": f"{unit} busy (% of {gpus})", "range": [0, 105]})
    return entry("Cluster utilisation over time", fig)


def jct_cdf_figure(trace: list[TraceJob], schedules: dict[str, Schedule]) -> dict[str, Any]:
    """The distribution of job completion times, one CDF per policy, on a log time axis."""
    fig = go.Figure()
    for name, schedule in schedules.items():
        jcts = sorted(schedule.finish[j.id] - j.submit for j in trace)
        fig.add_trace(
            go.Scatter(
                x=jcts,
                y=[(i + 1) / len(jcts) for i in range(len(jcts))],
                mode="lines",
                line={"shape": "hv", "color": COLOURS.get(name), "width": 3 if name == YOURS else 1.5},
                name=name,
            )
        )
    fig.update_layout(
        xaxis={"type": "log", "title": "job completion time (minutes)"}, yaxis={"title": "fraction of jobs"}
    )
    return entry("Job completion time CDF", fig)


def fairness_figure(results: dict[str, Metrics]) -> dict[str, Any]:
    """Jain's index of the jobs' speeds (duration / JCT) per policy."""
    names = list(results)
    fig = go.Figure(
        go.Bar(
            x=names,
            y=[results[n].jain for n in names],
            marker={"color": [COLOURS.get(n, "#17becf") for n in names]},
            text=[f"{results[n].jain:.3f}" for n in names],
            textposition="outside",
        )
    )
    fig.update_layout(yaxis={"title": "Jain's index of duration / JCT (1 = fair)", "range": [0, 1.1]})
    return entry("Fairness", fig)


def ranking_figure(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The ranking as a table: policy, mean and p95 JCT, utilisation, fairness, preemptions."""
    columns = ["rank", "policy", "mean_jct", "p95_jct", "utilisation", "jain", "preemptions"]
    headers = ["rank", "policy", "mean JCT (min)", "p95 JCT (min)", "utilisation", "Jain", "preemptions"]
    cells = [[_cell(row[c]) for row in rows] for c in columns]
    fig = go.Figure(go.Table(header={"values": headers}, cells={"values": cells}))
    return entry("Ranking", fig)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value < 10 else f"{value:.1f}"
    return str(value)
