"""The built-in scheduling policies, from Gao et al.'s taxonomy, each a `choose(queue, free_gpus, now)`.

Gao, Hu, Weng, Ye, Li, Zhang, Sun, "Deep Learning Workload Scheduling in GPU
Datacenters: A Survey", ACM Computing Surveys 56(6), 2024. They are written
against the same interface a learner's policy is (`gpu_worker.datacenter.simulate`),
so a learner can read them as examples. Simplified models of the systems named,
not re-implementations: no placement, no locality, no profiling.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpu_worker.datacenter.simulate import JobView

TIRESIAS_THRESHOLDS = (50.0, 500.0)  # GPU-minutes of attained service that move a job down a queue
GANDIVA_SLICE_MINUTES = 30.0


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
        Builtin("tiresias", "Tiresias 2D-LAS", tiresias, preemptive=True),
        Builtin("gandiva", "Gandiva time-slicing", gandiva, preemptive=True),
    )
}
