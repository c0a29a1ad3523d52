"""Module 6's figures: the built-in schedulers on one synthetic trace, and the sharing experiment's measurements.

The scheduling figures are the model's (`gpu_worker.datacenter`), on the same
synthetic trace as the first scheduling exercise, and say so. The sharing
figures read the newest committed `bench/results/*-sharing.json` that is not a
dry run (bench/sharing_bench.py, run on a GPU by bench/device_sharing.sh),
titled with its device and date; without one they say "not yet measured".
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from gpu_worker.datacenter import figures
from gpu_worker.datacenter.metrics import measure
from gpu_worker.datacenter.policies import BUILTINS
from gpu_worker.datacenter.simulate import Rules, Schedule, simulate
from gpu_worker.datacenter.trace import TraceJob, synthetic_trace
from labs.curriculum.lessons.registry import LessonContext, lesson_figure

RESULTS = Path(__file__).resolve().parents[3] / "bench" / "results"
TRACE = {"seed": 1, "jobs": 200, "cluster_gpus": 32, "load": 1.5}  # head-of-line's first trace


@functools.lru_cache(maxsize=1)
def _schedules() -> tuple[list[TraceJob], dict[str, Schedule]]:
    trace = synthetic_trace(**TRACE)
    gpus = TRACE["cluster_gpus"]
    return trace, {n: simulate(trace, Rules(gpus, preemptive=b.preemptive), b.choose) for n, b in BUILTINS.items()}


@lesson_figure("datacenter-utilisation")
def utilisation(context: LessonContext) -> dict[str, Any]:
    """GPUs busy over time under each built-in policy."""
    _, schedules = _schedules()
    return figures.utilisation_figure(schedules, TRACE["cluster_gpus"])["figure"]


@lesson_figure("datacenter-jct")
def jct(context: LessonContext) -> dict[str, Any]:
    """Mean and p95 job completion time, and Jain's index, per built-in policy."""
    trace, schedules = _schedules()
    results = {n: measure(trace, s, TRACE["cluster_gpus"]) for n, s in schedules.items()}
    names = [BUILTINS[n].title for n in results]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=names, y=[m.mean_jct for m in results.values()], name="mean JCT (min)"))
    fig.add_trace(go.Bar(x=names, y=[m.p95_jct for m in results.values()], name="p95 JCT (min)"))
    fig.add_trace(
        go.Scatter(x=names, y=[m.jain for m in results.values()], name="Jain's index", yaxis="y2", mode="markers+lines")
    )
    fig.update_layout(
        barmode="group",
        yaxis={"title": "minutes"},
        yaxis2={"overlaying": "y", "side": "right", "range": [0, 1.05], "title": "Jain's index"},
    )
    return figures.entry("Job completion time and fairness per policy", fig)["figure"]


def newest_sharing_results() -> dict[str, Any] | None:
    """The newest measured (not dry-run) sharing document, or None."""
    for path in sorted(RESULTS.glob("*-sharing.json"), reverse=True):
        try:
            document = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not document.get("dry_run") and document.get("summary"):
            return {**document, "file": f"bench/results/{path.name}"}
    return None


def _not_measured(title: str) -> dict[str, Any]:
    fig = go.Figure()
    fig.add_annotation(text="not yet measured: run bench/device_sharing.sh on a GPU", showarrow=False)
    fig.update_layout(title={"text": f"{title} · not yet measured"}, meta={"source": "not yet measured"})
    return json.loads(fig.to_json())


def _measured(fig: go.Figure, title: str, document: dict[str, Any]) -> dict[str, Any]:
    source = f"measured on {document['device']}, {document['date'][:10]} ({document['file']})"
    fig.update_layout(
        title={"text": f"{title} · {source}"},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 60, "r": 60, "t": 60, "b": 40},
        meta={"source": source},
    )
    return json.loads(fig.to_json())


@lesson_figure("sharing-throughput")
def sharing_throughput(context: LessonContext) -> dict[str, Any]:
    """Two batch processes' throughput together, against one process alone on the whole GPU."""
    title = "Two jobs on one GPU: throughput against the whole GPU"
    document = newest_sharing_results()
    if document is None:
        return _not_measured(title)
    rows = [r for r in document["summary"] if "throughput_vs_whole" in r]
    fig = go.Figure(
        go.Bar(
            x=[r["mode"] for r in rows],
            y=[r["throughput_vs_whole"] for r in rows],
            text=[f"{r['throughput_vs_whole']:.2f}x, job {r['job_latency_ms_p50']:.1f} ms" for r in rows],
            textposition="outside",
        )
    )
    fig.update_layout(yaxis={"title": "jobs/s of both processes / jobs/s of one alone", "range": [0, 1.3]})
    return _measured(fig, title, document)


@lesson_figure("sharing-noisy-neighbour")
def noisy_neighbour(context: LessonContext) -> dict[str, Any]:
    """A tiny kernel's latency beside a busy neighbour, as CUDA events and as its host see it."""
    title = "A small kernel beside a noisy neighbour: p50 and p99 latency"
    document = newest_sharing_results()
    if document is None:
        return _not_measured(title)
    rows = [r for r in document["summary"] if "probe_host_us_p99" in r]
    modes = [r["mode"] if r["mode"] != "whole" else "alone" for r in rows]
    fig = go.Figure()
    for key, name in (
        ("probe_host_us_p50", "launch to done, p50 (host)"),
        ("probe_host_us_p99", "launch to done, p99 (host)"),
        ("probe_us_p99", "kernel, p99 (CUDA events)"),
    ):
        fig.add_trace(go.Bar(x=modes, y=[r[key] for r in rows], name=name))
    fig.update_layout(barmode="group", yaxis={"title": "microseconds", "type": "log"})
    return _measured(fig, title, document)
