"""Pipeline parallelism: the bubble, and the GPipe and 1F1B timetables it comes from.

With p stages and m micro-batches, a forward and a backward each taking one
slot per stage (t_f = t_b), both GPipe (Huang et al. 2019) and 1F1B
(PipeDream-Flush; Narayanan et al. 2021, section 2.2) finish in 2(m + p - 1)
slots where 2m would do: the bubble is (p - 1) / (m + p - 1) of the time, or
(p - 1) / m of the ideal time as Narayanan et al. write it. 1F1B's gain is
memory: stage s holds at most p - s micro-batches' activations, GPipe m.
Interleaving v model chunks per GPU divides the bubble by v (Narayanan et al.
2021, section 2.2.2): (p - 1) / (v m + p - 1) of the time.
"""

from __future__ import annotations

from gpu_worker.multigpu import MODEL

SCHEDULES = ("gpipe", "1f1b")
SOURCE = "Huang et al. 2019 (GPipe); Narayanan et al. 2021 (Megatron-LM, section 2.2): bubble (p-1)/(m+p-1)"

__all__ = ["MODEL", "SCHEDULES", "bubble_fraction", "bubble_over_ideal", "peak_in_flight", "timetable", "makespan"]


def _check(p: int, m: int, v: int = 1) -> None:
    if p < 1 or m < 1 or v < 1:
        raise ValueError("stages, micro-batches and chunks per GPU must be at least 1")


def bubble_fraction(p: int, m: int, v: int = 1) -> float:
    """The share of a pipeline step that each GPU sits idle: (p - 1) / (v m + p - 1)."""
    _check(p, m, v)
    return (p - 1) / (v * m + p - 1)


def bubble_over_ideal(p: int, m: int, v: int = 1) -> float:
    """The bubble as Narayanan et al. 2021 write it, relative to the ideal time: (p - 1) / (v m)."""
    _check(p, m, v)
    return (p - 1) / (v * m)


def peak_in_flight(schedule: str, p: int, m: int) -> int:
    """The most micro-batches whose activations a stage holds at once (the first stage's)."""
    _check(p, m)
    if schedule == "gpipe":
        return m
    if schedule == "1f1b":
        return min(p, m)
    raise ValueError(f"unknown schedule {schedule!r} (one of {', '.join(SCHEDULES)})")


def _order(schedule: str, p: int, m: int, stage: int) -> list[tuple[str, int]]:
    if schedule == "gpipe":
        return [("F", j) for j in range(m)] + [("B", j) for j in range(m)]
    if schedule != "1f1b":
        raise ValueError(f"unknown schedule {schedule!r} (one of {', '.join(SCHEDULES)})")
    warmup = min(p - 1 - stage, m)
    ops = [("F", j) for j in range(warmup)]
    for k in range(m - warmup):
        ops += [("F", warmup + k), ("B", k)]
    return ops + [("B", k) for k in range(m - warmup, m)]


def timetable(schedule: str, p: int, m: int) -> tuple[list[list[int]], list[list[int]]]:
    """The slot each stage starts each micro-batch's forward and backward in, one slot per op.

    Each stage runs its ops in the schedule's order, each as soon as its input
    is there: forward j on stage s after forward j on stage s - 1; backward j
    on stage s after backward j on stage s + 1 (the last stage after its own forward).
    """
    _check(p, m)
    orders = [_order(schedule, p, m, s) for s in range(p)]
    start: dict[tuple[str, int, int], int] = {}
    nxt, free = [0] * p, [0] * p
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for s in range(p):
            if nxt[s] == len(orders[s]):
                continue
            kind, j = orders[s][nxt[s]]
            dep = ("F", s - 1, j) if kind == "F" else ("B", s + 1, j) if s < p - 1 else ("F", s, j)
            if kind == "F" and s == 0:
                ready = 0
            elif dep in start:
                ready = start[dep] + 1
            else:
                continue
            start[(kind, s, j)] = max(ready, free[s])
            free[s] = start[(kind, s, j)] + 1
            nxt[s] += 1
            remaining -= 1
            progressed = True
        if not progressed:
            raise RuntimeError(f"schedule {schedule} deadlocks for p={p}, m={m}")
    forward = [[start[("F", s, j)] for j in range(m)] for s in range(p)]
    backward = [[start[("B", s, j)] for j in range(m)] for s in range(p)]
    return forward, backward


def makespan(schedule: str, p: int, m: int) -> int:
    """Slots from the first forward to the end of the last backward."""
    _, backward = timetable(schedule, p, m)
    return max(max(row) for row in backward) + 1
