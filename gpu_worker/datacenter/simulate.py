"""A discrete-event simulator of a GPU cluster that asks a policy what to run at every decision.

The cluster is a pool of interchangeable GPUs (no nodes, no placement or
locality: a model). A job needs all its GPUs at once (gang allocation) and runs
for its duration on them. The simulator asks the policy at every arrival and
every completion, and, when preemption is allowed, also every quantum while a
job waits and another runs (an idle cluster changes only when a job arrives):

    choose(queue, free_gpus, now) -> job ids

`queue` lists every job that has arrived and not finished (running or
waiting, as `JobView`s, oldest first), `free_gpus` the GPUs no running job
holds, `now` the time in minutes. The answer is the jobs that should run from
now on, most important first. They are taken in that order and each one that
fits starts (first fit); the rest wait. Without preemption running jobs keep
their GPUs whatever the answer says; with it, a running job left out is
stopped (preempted: it keeps its progress, and pays `restart_minutes` when it
resumes, reloading its checkpoint).

Deterministic: the same trace, rules and policy give the same schedule. Every
decision is recorded, so a schedule can be replayed (`Replay`) and checked by
another process. Standard library only.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gpu_worker.datacenter.trace import TraceJob

EPS = 1e-9
Policy = Callable[[list["JobView"], int, float], Iterable[int]]


class InvalidDecision(ValueError):
    """The policy answered something that is not a list of distinct ids of jobs in the queue."""


class Stalled(RuntimeError):
    """Jobs wait, none runs, and nothing will happen that could change that."""


class ReplayExhausted(RuntimeError):
    """A replay was asked for more decisions than it was given."""


@dataclass(frozen=True)
class Rules:
    """What the policy may do and how often it is asked."""

    gpus: int
    preemptive: bool = False
    quantum_minutes: float = 30.0
    restart_minutes: float = 1.0
    reveal_duration: bool = True
    max_decisions: int = 20_000


@dataclass(frozen=True)
class JobView:
    """What a policy sees of one job."""

    id: int
    gpus: int
    submitted: float  # minutes
    duration: float | None  # its true running time; None when the exercise hides it
    attained: float  # GPU-minutes of service so far (GPUs x minutes run)
    executed: float  # minutes run so far
    running: bool
    resumed: float | None  # when its current run began; None while it waits
    last_ran: float | None  # the last time it held GPUs (now, if running); None if it never ran
    preemptions: int


@dataclass
class Schedule:
    """What happened: when each job ran and finished, and every decision the policy made."""

    finish: dict[int, float] = field(default_factory=dict)
    intervals: list[tuple[int, float, float, int]] = field(default_factory=list)  # job, start, end, gpus
    decisions: list[list[int]] = field(default_factory=list)
    preemptions: int = 0


@dataclass
class _Job:
    job: TraceJob
    remaining: float
    attained: float = 0.0
    executed: float = 0.0
    running: bool = False
    resumed: float | None = None
    last_ran: float | None = None
    preemptions: int = 0

    def view(self, now: float, reveal: bool) -> JobView:
        j = self.job
        return JobView(
            j.id,
            j.gpus,
            j.submit,
            j.duration if reveal else None,
            self.attained,
            self.executed,
            self.running,
            self.resumed,
            now if self.running else self.last_ran,
            self.preemptions,
        )


def as_ids(answer: object, queue_ids: set[int]) -> list[int]:
    """The policy's answer as a list of distinct queued job ids; InvalidDecision says what is wrong."""
    if isinstance(answer, str | bytes) or not isinstance(answer, Iterable):
        raise InvalidDecision(f"the policy must return a list of job ids, not {type(answer).__name__}")
    ids: list[int] = []
    seen: set[int] = set()
    for item in answer:
        if isinstance(item, bool):
            raise InvalidDecision(f"the policy returned {item!r}, not a job id")
        try:
            job_id = operator.index(item)  # type: ignore[call-overload]
        except TypeError:
            raise InvalidDecision(f"the policy returned {item!r} ({type(item).__name__}), not a job id") from None
        if job_id not in queue_ids:
            raise InvalidDecision(f"the policy chose job {job_id}, which is not in the queue")
        if job_id in seen:
            raise InvalidDecision(f"the policy chose job {job_id} twice")
        seen.add(job_id)
        ids.append(job_id)
    return ids


class _Cluster:
    def __init__(self, rules: Rules):
        self.rules = rules
        self.free = rules.gpus
        self.active: dict[int, _Job] = {}
        self.schedule = Schedule()

    def decide(self, policy: Policy, now: float) -> None:
        if len(self.schedule.decisions) >= self.rules.max_decisions:
            raise Stalled(f"the policy was asked {self.rules.max_decisions} times and the trace is still not done")
        ordered = sorted(self.active.values(), key=lambda s: (s.job.submit, s.job.id))
        queue = [s.view(now, self.rules.reveal_duration) for s in ordered]
        chosen = as_ids(policy(queue, self.free, now), set(self.active))
        self.schedule.decisions.append(chosen)
        self._apply(chosen, now)

    def _apply(self, chosen: list[int], now: float) -> None:
        if self.rules.preemptive:
            room, keep = self.rules.gpus, set()
            for job_id in chosen:
                if self.active[job_id].job.gpus <= room:
                    room -= self.active[job_id].job.gpus
                    keep.add(job_id)
            for s in list(self.active.values()):
                if s.running and s.job.id not in keep:
                    self._stop(s, now, preempted=True)
            for job_id in chosen:
                if job_id in keep and not self.active[job_id].running:
                    self._start(self.active[job_id], now)
        else:
            for job_id in chosen:
                s = self.active[job_id]
                if not s.running and s.job.gpus <= self.free:
                    self._start(s, now)

    def _start(self, s: _Job, now: float) -> None:
        if s.preemptions:
            s.remaining += self.rules.restart_minutes  # the checkpoint reload a resumed job pays
        s.running, s.resumed = True, now
        self.free -= s.job.gpus

    def _stop(self, s: _Job, now: float, preempted: bool) -> None:
        assert s.resumed is not None
        if now > s.resumed:
            self.schedule.intervals.append((s.job.id, s.resumed, now, s.job.gpus))
        s.running, s.resumed, s.last_ran = False, None, now
        self.free += s.job.gpus
        if preempted:
            s.preemptions += 1
            self.schedule.preemptions += 1

    def advance(self, now: float, until: float) -> None:
        dt = until - now
        for s in self.active.values():
            if s.running:
                s.remaining -= dt
                s.executed += dt
                s.attained += dt * s.job.gpus
        for s in list(self.active.values()):
            if s.running and s.remaining <= EPS * max(1.0, s.job.duration):
                self._stop(s, until, preempted=False)
                self.schedule.finish[s.job.id] = until
                del self.active[s.job.id]


def simulate(trace: list[TraceJob], rules: Rules, policy: Policy) -> Schedule:
    """Run the whole trace under `policy`; raises InvalidDecision or Stalled (and whatever the policy raises)."""
    for j in trace:
        if j.gpus > rules.gpus or j.gpus < 1 or j.duration <= 0:
            raise ValueError(f"job {j.id} needs {j.gpus} GPUs for {j.duration} minutes on a {rules.gpus}-GPU cluster")
    pending = sorted(trace, key=lambda j: (j.submit, j.id))
    cluster, now, arrived = _Cluster(rules), 0.0, 0
    while arrived < len(pending) or cluster.active:
        while arrived < len(pending) and pending[arrived].submit <= now + EPS:
            j = pending[arrived]
            cluster.active[j.id] = _Job(j, j.duration)
            arrived += 1
        if not cluster.active:
            now = pending[arrived].submit
            continue
        cluster.decide(policy, now)
        running = [s for s in cluster.active.values() if s.running]
        times = [now + s.remaining for s in running]
        if arrived < len(pending):
            times.append(pending[arrived].submit)
        if rules.preemptive and running and len(running) < len(cluster.active):
            times.append(now + rules.quantum_minutes)  # waiting jobs: ask again after a quantum
        next_time = min(times, default=math.inf)
        if next_time == math.inf:
            raise Stalled(
                f"at minute {now:.1f} {len(cluster.active)} jobs wait, none runs, and no job will arrive: "
                "the policy must start one"
            )
        cluster.advance(now, next_time)
        now = next_time
    return cluster.schedule


class Replay:
    """A policy that answers with recorded decisions, in order: a schedule re-simulated from its decisions."""

    def __init__(self, decisions: list[list[int]]):
        self.decisions = decisions
        self.used = 0

    def __call__(self, queue: list[JobView], free_gpus: int, now: float) -> list[int]:
        if self.used >= len(self.decisions):
            raise ReplayExhausted(f"the policy's decisions ended after {self.used}, at minute {now:.1f}")
        self.used += 1
        return self.decisions[self.used - 1]
