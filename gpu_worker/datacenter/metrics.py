"""What a schedule achieved: job completion times, utilisation over time, fairness.

- JCT (job completion time) = finish - submit, in minutes; p95 by the
  nearest-rank method (the ceil(0.95 n)-th smallest), so tiny traces can be
  checked by hand.
- Utilisation = busy GPU-minutes / (GPUs x makespan), the makespan counted from
  minute 0 to the last finish; `utilisation_steps` gives it over time.
- Fairness: Jain's index (Jain, Chiu, Hawe, DEC-TR-301, 1984) of each job's
  speed, duration / JCT (1 when a job never waits or stops): 1 when every job
  is slowed alike, 1/n when one job gets everything.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from gpu_worker.datacenter.simulate import Schedule
from gpu_worker.datacenter.trace import TraceJob


@dataclass(frozen=True)
class Metrics:
    mean_jct: float
    p95_jct: float
    makespan: float
    utilisation: float
    jain: float
    mean_wait: float  # JCT - duration, averaged: time spent queued or stopped, and restart costs
    preemptions: int

    def as_dict(self) -> dict[str, float | int]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def nearest_rank(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(fraction * len(ordered)) - 1, 0)]


def jain_index(values: list[float]) -> float:
    total, squares = sum(values), sum(v * v for v in values)
    return total * total / (len(values) * squares) if squares else 1.0


def measure(trace: list[TraceJob], schedule: Schedule, gpus: int) -> Metrics:
    jcts = [schedule.finish[j.id] - j.submit for j in trace]
    makespan = max(schedule.finish.values())
    busy = sum((end - start) * n for _, start, end, n in schedule.intervals)
    return Metrics(
        mean_jct=sum(jcts) / len(jcts),
        p95_jct=nearest_rank(jcts, 0.95),
        makespan=makespan,
        utilisation=busy / (gpus * makespan) if makespan > 0 else 0.0,
        jain=jain_index([j.duration / jct for j, jct in zip(trace, jcts, strict=True)]),
        mean_wait=sum(jct - j.duration for j, jct in zip(trace, jcts, strict=True)) / len(jcts),
        preemptions=schedule.preemptions,
    )


def utilisation_steps(schedule: Schedule, gpus: int) -> tuple[list[float], list[float]]:
    """Busy fraction of the cluster as a step function: (times, fraction from that time on)."""
    changes: dict[float, int] = {}
    for _, start, end, n in schedule.intervals:
        changes[start] = changes.get(start, 0) + n
        changes[end] = changes.get(end, 0) - n
    times, fractions, busy = [0.0], [0.0], 0
    for t in sorted(changes):
        busy += changes[t]
        if times[-1] == t:
            fractions[-1] = busy / gpus
        else:
            times.append(t)
            fractions.append(busy / gpus)
    return times, fractions
