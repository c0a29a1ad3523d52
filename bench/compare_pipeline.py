"""Side by side: `bench/pipeline.py` runs (its `pipeline.json` files) as one markdown table of p50 and p95.

    .venv/bin/python bench/compare_pipeline.py before=/tmp/a/pipeline.json after=/tmp/b/pipeline.json

Each argument is `NAME=PATH` or `NAME=PATH#LANGUAGE` (that language's jobs only); the columns are in the
order given. Rows: seconds from the submit to each
job's `compiled`, first `figure` (the occupancy graphs), first `check` and `done`, over the measured
rounds (the first job after the worker's start is shown on its own line), and the load average the run
recorded before and after; then, for runs with a load phase, a second table of it (`load_table`): jobs an hour,
the verdict and the first figure, and where a job waited (the worker, the claim, the GPU lock's two kinds).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

EVENTS = (("compiled", "compiled (registers)"), ("figure", "occupancy figure"), ("check", "first check"))
EVENTS += (("done", "verdict (done)"),)


def _quantiles(values: list[float]) -> tuple[float, float]:
    p95 = statistics.quantiles(values, n=100, method="inclusive")[94] if len(values) > 1 else values[0]
    return statistics.median(values), p95


def table(runs: dict[str, dict[str, Any]]) -> str:
    names = list(runs)
    lines = [
        "| submit → | " + " | ".join(f"{n} p50 | {n} p95" for n in names) + " |",
        "| --- |" + " --- | --- |" * len(names),
    ]
    for kind, words in EVENTS:
        cells = []
        for name in names:
            values = [j["first"][kind] for j in runs[name]["jobs"] if kind in j["first"]]
            if values:
                p50, p95 = _quantiles(values)
                cells += [f"{p50:.3f} s", f"{p95:.3f} s"]
            else:
                cells += ["–", "–"]
        lines.append(f"| {words} | " + " | ".join(cells) + " |")
    firsts = []
    for name in names:
        first = runs[name]["cold_job"]["first"]
        firsts.append(f"{first.get('figure', float('nan')):.3f} s")
        firsts.append(f"{first.get('done', float('nan')):.3f} s")
    lines.append("| first job after the worker's start: figure, done | " + " | ".join(firsts) + " |")
    lines.append(
        "| jobs (with the reference's verdict), served by a spare | "
        + " | ".join(
            f"{len(runs[n]['jobs'])} ({sum(j['verdict'] in ('accepted', 'not_run') for j in runs[n]['jobs'])}) | "
            f"{sum(bool(j.get('warm_start')) for j in runs[n]['jobs'])}"
            for n in names
        )
        + " |"
    )
    lines.append(
        "| load average (1, 5, 15 min) before / after | "
        + " | ".join(f"{_load(runs[n], 'load_before')} | {_load(runs[n], 'load_after')}" for n in names)
        + " |"
    )
    return "\n".join(lines) + "\n"


def _seconds(stats: dict[str, Any] | None, p95: bool = False) -> str:
    if not stats:
        return "–"
    return f"{stats['p50']:.3f} / {stats['p95']:.3f} s" if p95 else f"{stats['p50']:.3f} s"


def _by_size(sizes: list[dict[str, Any]] | None) -> str:
    return ", ".join(f"{s['p50']:.3f}" for s in sizes or [] if s) + " s" if sizes else "–"


def _first_hold(where: dict[str, Any]) -> str:
    """Inside the job's first size's exclusive hold, each step's p50 (`timing._HostClock`), the largest first."""
    steps = (where.get("hold_phases_by_size_s") or [{}])[0]
    ranked = sorted(((v["p50"], k) for k, v in steps.items() if v and v["p50"] >= 0.0005), reverse=True)
    return ", ".join(f"{k} {p50 * 1000:.1f}" for p50, k in ranked) + " ms" if ranked else "–"


LOAD_ROWS: tuple[tuple[str, Any], ...] = (
    ("graded jobs an hour", lambda load, where: f"{load['jobs_per_hour']:,.0f}"),
    ("verdict p50 / p95", lambda load, where: _seconds(load["verdict_s"], p95=True)),
    ("first figure p50 / p95", lambda load, where: _seconds(load["first_figure_s"], p95=True)),
    ("submit → a worker took it, p50", lambda load, where: _seconds(where.get("submit_to_worker_took_it_s"))),
    ("the claim's round trip, p50 / p95", lambda load, where: _seconds(where.get("claim_round_trip_s"), p95=True)),
    (
        "exclusive kind held per job, p50 / p95",
        lambda load, where: _seconds(where.get("lock_held_per_job_s"), p95=True),
    ),
    ("… by size, p50", lambda load, where: _by_size(where.get("lock_held_by_size_s"))),
    ("inside the first size's hold, p50", lambda load, where: _first_hold(where)),
    ("GPU time per job, p50", lambda load, where: _seconds(where.get("gpu_per_job_s"))),
    ("wait for the exclusive kind, p50", lambda load, where: _seconds(where.get("lock_wait_per_job_s"))),
    ("wait for the shared kind, p50", lambda load, where: _seconds(where.get("checks_wait_per_job_s"))),
    ("shared kind held by size, p50", lambda load, where: _by_size(where.get("shared_hold_by_size_s"))),
    ("samples a size, p50 / p95", lambda load, where: "{p50:.0f} / {p95:.0f}".format(**where["samples_per_size"])),
    (
        "timing lock held (heartbeat)",
        lambda load, where: f"{(load.get('gpu_busy') or {}).get('lock_held_per_wall', 0):.1%}",
    ),
    (
        "the host's CPU per job (cores)",
        lambda load, where: "{per_job_s:.2f} s ({cores:.1f})".format(**load["host_cpu"]["the whole machine"]),
    ),
)


def load_table(runs: dict[str, dict[str, Any]]) -> str:
    """The load phase side by side (`bench/pipeline.py --learners`): throughput, latency and where a job waited."""
    names = [n for n in runs if runs[n].get("load")]
    if not names:
        return ""
    lines = ["| under the load | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    for words, cell in LOAD_ROWS:
        row = []
        for name in names:
            load = runs[name]["load"]
            try:
                row.append(cell(load, load.get("where_the_time_went") or {}))
            except (KeyError, TypeError):
                row.append("–")
        lines.append(f"| {words} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def _load(run: dict[str, Any], key: str) -> str:
    load = run.get(key)
    return " ".join(f"{x:.2f}" for x in load) if load else "?"


def main(argv: list[str]) -> int:
    runs = {}
    for arg in argv:
        name, _, where = arg.partition("=")
        path, _, language = where.partition("#")
        run = json.loads(Path(path).read_text())
        if language:
            run["jobs"] = [j for j in run["jobs"] if j["language"] == language]
        runs[name] = run
    print(table(runs), end="")
    if loaded := load_table(runs):
        print("\n" + loaded, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
