"""Side by side: `bench/pipeline.py` runs (its `pipeline.json` files) as one markdown table of p50 and p95.

    .venv/bin/python bench/compare_pipeline.py before=/tmp/a/pipeline.json after=/tmp/b/pipeline.json

Each argument is `NAME=PATH` or `NAME=PATH#LANGUAGE` (that language's jobs only); the columns are in the
order given. Rows: seconds from the submit to each
job's `compiled`, first `figure` (the occupancy graphs), first `check` and `done`, over the measured
rounds (the first job after the worker's start is shown on its own line), and the load average the run
recorded before and after.
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
