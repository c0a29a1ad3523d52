"""The built-in scheduling policies, from Gao et al.'s taxonomy, each a `choose(queue, free_gpus, now)`.

Gao, Hu, Weng, Ye, Li, Zhang, Sun, "Deep Learning Workload Scheduling in GPU
Datacenters: A Survey", ACM Computing Surveys 56(6), 2024. They are written
against the same interface a learner's policy is (`gpu_worker.datacenter.simulate`),
so a learner can read them as examples. Simplified models of the systems named,
not re-implementations: no placement, no locality, no profiling.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gpu_worker.datacenter.simulate import JobView

TIRESIAS_THRESHOLDS = (50.0, 500.0)  # GPU-minutes of attained service that move a job down a queue
GANDIVA_SLICE_MINUTES = 30.0
EASY_SLACK_MINUTES = 1e-6  # a backfilled job that ends at the shadow time, up to rounding, does not delay the head


def fifo(queue: list[JobView], free_gpus: int, now: float) -> list[int]:
    """First in, first out, strictly: a job that does not fit blocks every job behind it (head-of-line)."""
    chosen = [j.id for j in queue if j.running]
    for job in queue:
        if job.running:
            continue
        if job.gpus > free_gpus:
            break
        chosen.append(job.id)
        free_gpus -= job.gpus
    return chosen


def sjf(queue: list[JobView], free_gpus: int, now: float) -> list[int]:
    """Shortest job first, without preemption, any waiting job that fits: needs the durations (an oracle)."""
    waiting = sorted((j for j in queue if not j.running), key=lambda j: (j.duration or 0.0, j.submitted, j.id))
    return [j.id for j in queue if j.running] + [j.id for j in waiting]


def gang(queue: list[JobView], free_gpus: int, now: float) -> list[int]:
    """Gang scheduling with backfill: all of a job's GPUs at once, arrival order, any job that fits may start."""
    return [j.id for j in queue]


def expected_end(job: JobView, now: float) -> float:
    """When a job will finish if it starts (or keeps running) now, by its duration; infinity when it is hidden."""
    if job.duration is None:
        return math.inf
    return now + job.duration - job.executed


def shadow_time(ends: list[tuple[float, int]], free_gpus: int, needed: int) -> tuple[float, int]:
    """When `needed` GPUs will be free, given (end, GPUs) of the jobs holding the others, and how many more.

    The second number is EASY's "extra" GPUs: those free at the shadow time
    beyond what the reserved job needs. (inf, 0) when the estimates cannot tell.
    """
    for end, gpus in sorted(ends):
        if end == math.inf:
            break
        free_gpus += gpus
        if free_gpus >= needed:
            return end, free_gpus - needed
    return math.inf, 0


def easy(queue: list[JobView], free_gpus: int, now: float) -> list[int]:
    """EASY backfilling: FIFO, and a job may pass a blocked head only if it cannot delay the head's start.

    The head job that does not fit gets a reservation at the shadow time, the
    earliest time enough GPUs free up by the running jobs' expected ends. A
    later job that fits now starts if it ends by the shadow time, or if it uses
    only the extra GPUs the head will not need then. Needs run-time estimates:
    here the true durations (an oracle, as for SJF), so the reservation holds;
    with none it is strict FIFO. Non-preemptive. Lifka, "The ANL/IBM SP
    Scheduling System", JSSPP 1995; Mu'alem and Feitelson, "Utilization,
    Predictability, Workloads, and User Runtime Estimates in Scheduling the IBM
    SP2 with Backfilling", IEEE TPDS 12(6), 2001.
    """
    chosen = [j.id for j in queue if j.running]
    ends = [(expected_end(j, now), j.gpus) for j in queue if j.running]
    waiting = [j for j in queue if not j.running]
    while waiting and waiting[0].gpus <= free_gpus:
        job = waiting.pop(0)
        chosen.append(job.id)
        ends.append((expected_end(job, now), job.gpus))
        free_gpus -= job.gpus
    if not waiting:
        return chosen
    shadow, extra = shadow_time(ends, free_gpus, waiting[0].gpus)
    if shadow == math.inf:
        return chosen  # no estimate of when the head can start: nothing may pass it
    for job in waiting[1:]:
        if job.gpus > free_gpus:
            continue
        if expected_end(job, now) > shadow + EASY_SLACK_MINUTES:  # still running when the head starts
            if job.gpus > extra:
                continue
            extra -= job.gpus
        chosen.append(job.id)
        free_gpus -= job.gpus
    return chosen


def tiresias_queue(job: JobView) -> int:
    """Which of Tiresias' discretised priority queues a job is in, by its attained GPU-minutes."""
    return sum(job.attained >= t for t in TIRESIAS_THRESHOLDS)


def tiresias(queue: list[JobView], free_gpus: int, now: float) -> list[int]:
    """Tiresias-style discretised 2D-LAS: least attained service (GPUs x time) first, FIFO within a queue.

    Needs no durations. Preemptive: a job that has had much service yields to
    newcomers. Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep
    Learning", NSDI 2019 (its starvation guard and placement are left out).
    """
    return [j.id for j in sorted(queue, key=lambda j: (tiresias_queue(j), j.submitted, j.id))]


def gandiva(queue: list[JobView], free_gpus: int, now: float) -> list[int]:
    """Gandiva-style time-slicing: when jobs wait, each running job yields after a slice, round-robin.

    A job in the middle of its slice keeps its GPUs; then the jobs that have
    waited longest since they last ran; then those whose slice is over. Xiao et
    al., "Gandiva: Introspective Cluster Scheduling for Deep Learning", OSDI 2018
    (suspend-resume only; its packing and migration are left out).
    """

    def rank(j: JobView) -> tuple[int, float, int]:
        if j.running and j.resumed is not None and now - j.resumed < GANDIVA_SLICE_MINUTES - 1e-6:
            return (0, j.resumed, j.id)
        if not j.running:
            return (1, j.last_ran if j.last_ran is not None else j.submitted, j.id)
        return (2, j.resumed or 0.0, j.id)

    return [j.id for j in sorted(queue, key=rank)]


@dataclass(frozen=True)
class Builtin:
    name: str
    title: str
    choose: Callable[[list[JobView], int, float], list[int]]
    preemptive: bool
    needs_duration: bool = False


BUILTINS: dict[str, Builtin] = {
    b.name: b
    for b in (
        Builtin("fifo", "FIFO (strict)", fifo, preemptive=False),
        Builtin("sjf", "Shortest job first (oracle)", sjf, preemptive=False, needs_duration=True),
        Builtin("gang", "Gang + backfill", gang, preemptive=False),
        Builtin("easy", "EASY backfilling (estimates)", easy, preemptive=False, needs_duration=True),
        Builtin("tiresias", "Tiresias 2D-LAS", tiresias, preemptive=True),
        Builtin("gandiva", "Gandiva time-slicing", gandiva, preemptive=True),
    )
}
