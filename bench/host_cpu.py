"""Where the host's CPU went during a load run: each service's own seconds and its descendants', from /proc.

Under a class's load the GPU service is host-bound (run 23: load average 19 on 16 cores, the GPU busy one
second in five), so the load bench says which processes the cores were spent in, per job: the website's
Celery worker, each GPU worker's engine, the sandboxed children and compilers below the engines, Redis,
the bench itself (the website's submit calls and the learners' sockets run in it), and whatever else ran.

A process's seconds are its `utime + stime`; a parent's `cutime + cstime` holds the children it reaped, so
a service's tree at a moment is its live processes' own seconds plus what each of them reaped. Taken
before and after the load, the difference is the tree's CPU in between (a sandbox that lived through the
start counts its whole life; at a job a second that is a few seconds in a minute's run).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from the repository root

from gpu_worker.isolation import tree_cpu  # noqa: E402  (the /proc process table the engine reads too)


def snapshot(roots: dict[str, int]) -> dict[str, dict[str, float]]:
    """Per named root process: its own CPU seconds so far and its descendants' (live ones' and reaped ones')."""
    table = tree_cpu.processes()
    taken: dict[str, dict[str, float]] = {}
    for name, root in roots.items():
        if root not in table:
            continue
        below = table[root].reaped + sum(table[p].own + table[p].reaped for p in tree_cpu.descendants(table, root))
        taken[name] = {"own_s": table[root].own, "below_s": below}
    return taken


def machine_busy_s() -> float:
    """CPU seconds every core has spent busy since boot (all but idle and iowait), from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return (sum(values[:8]) - idle) / tree_cpu.TICKS


def between(
    before: dict[str, dict[str, float]],
    after: dict[str, dict[str, float]],
    busy_s: float,
    wall_s: float,
    jobs: int,
    also: dict[str, float] | None = None,
) -> dict[str, object]:
    """The CPU each service (own, below), each of `also` (name: seconds, counted by the caller) and the rest
    of the machine spent between two snapshots: seconds, cores (seconds per wall second), seconds per job."""

    def row(seconds: float) -> dict[str, float]:
        return {
            "cpu_s": round(seconds, 2),
            "cores": round(seconds / wall_s, 2) if wall_s else 0.0,
            "per_job_s": round(seconds / jobs, 3) if jobs else 0.0,
        }

    rows: dict[str, object] = {}
    counted = 0.0
    for name in after:
        if name not in before:
            continue
        for part in ("own_s", "below_s"):
            spent = max(0.0, after[name][part] - before[name][part])
            counted += spent
            rows[f"{name} ({'itself' if part == 'own_s' else 'its children'})"] = row(spent)
    for name, spent in (also or {}).items():
        counted += spent
        rows[name] = row(spent)
    rows["everything else on the machine"] = row(max(0.0, busy_s - counted))
    rows["the whole machine"] = {**row(busy_s), "cores_present": os.cpu_count() or 0}
    return rows
