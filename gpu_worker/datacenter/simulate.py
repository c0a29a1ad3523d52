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

With `mig` each GPU is cut into MIG instances (`gpu_worker.datacenter.mig`): a
job's `gpus` is the compute slices of the one instance it asks for, `free_gpus`
counts free compute slices on every GPU together, and a job starts only where
its profile can be placed, so free slices spread over GPUs may hold nothing
(fragmentation). A running job's view says where it sits (`placement`). The
answer may place a job itself: `(job id, GPU, first memory slice)` in place of
its id; a bare id gets the first fit. MIG is not preemptive here: moving an
instance is a checkpoint and a restart.

Deterministic: the same trace, rules and policy give the same schedule. Every
decision is recorded, so a schedule can be replayed (`Replay`) and checked by
another process. Standard library only.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from gpu_worker.datacenter.mig import COMPUTE_SLICES, PROFILES, MigLayout
from gpu_worker.datacenter.trace import TraceJob

EPS = 1e-9
Choice = int | tuple[int, int, int]  # a job id or, with MIG, (job id, GPU, first memory slice)
Policy = Callable[[list["JobView"], int, float], Iterable[Choice]]


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
    mig: bool = False  # each GPU is cut into MIG instances; a job asks for one of `gpus` compute slices

    @property
    def capacity(self) -> int:
        """What `free_gpus` counts when the cluster is idle: GPUs, or with MIG their compute slices."""
        return self.gpus * COMPUTE_SLICES if self.mig else self.gpus


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
    placement: tuple[int, int] | None = None  # with MIG, a running job's (GPU, first memory slice)


@dataclass
class Schedule:
    """What happened: when each job ran and finished, and every decision the policy made."""

    finish: dict[int, float] = field(default_factory=dict)
    intervals: list[tuple[int, float, float, int]] = field(default_factory=list)  # job, start, end, gpus
    decisions: list[list[Choice]] = field(default_factory=list)
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

    def view(self, now: float, reveal: bool, placement: tuple[int, int] | None = None) -> JobView:
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
            placement,
        )


def _placed(item: object) -> tuple[object, tuple[int, int] | None]:
    """A `(job id, GPU, first memory slice)` answer item split into the id and the place; a bare id as it is."""
    if not isinstance(item, tuple | list):
        return item, None
    if len(item) != 3 or not all(isinstance(v, int) and not isinstance(v, bool) for v in item):
        raise InvalidDecision(f"the policy returned {item!r}: a placed job is (job id, GPU, first memory slice)")
    return item[0], (item[1], item[2])


def job_id_of(choice: Choice) -> int:
    return choice if isinstance(choice, int) else choice[0]


def as_ids(answer: object, queue_ids: set[int], placing: bool = False) -> list[Choice]:
    """The policy's answer as distinct queued job ids (placed ones with MIG); InvalidDecision says what is wrong."""
    if isinstance(answer, str | bytes) or not isinstance(answer, Iterable):
        raise InvalidDecision(f"the policy must return a list of job ids, not {type(answer).__name__}")
    ids: list[Choice] = []
    seen: set[int] = set()
    for item in answer:
        place = None
        if placing:
            item, place = _placed(item)
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
        ids.append(job_id if place is None else (job_id, *place))
    return ids


class _Cluster:
    def __init__(self, rules: Rules):
        self.rules = rules
        self.free = rules.capacity
        self.layout = MigLayout(rules.gpus) if rules.mig else None
        self.active: dict[int, _Job] = {}
        self.schedule = Schedule()

    def decide(self, policy: Policy, now: float) -> None:
        if len(self.schedule.decisions) >= self.rules.max_decisions:
            raise Stalled(f"the policy was asked {self.rules.max_decisions} times and the trace is still not done")
        ordered = sorted(self.active.values(), key=lambda s: (s.job.submit, s.job.id))
        where = self.layout.where if self.layout else {}
        queue = [s.view(now, self.rules.reveal_duration, where.get(s.job.id)) for s in ordered]
        chosen = as_ids(policy(queue, self.free, now), set(self.active), placing=self.rules.mig)
        self.schedule.decisions.append(chosen)
        self._apply(chosen, now)

    def _apply(self, chosen: list[Choice], now: float) -> None:
        if self.rules.preemptive:  # never with MIG: every choice is a job id
            ids = [job_id_of(choice) for choice in chosen]
            room, keep = self.rules.gpus, set()
            for job_id in ids:
                if self.active[job_id].job.gpus <= room:
                    room -= self.active[job_id].job.gpus
                    keep.add(job_id)
            for s in list(self.active.values()):
                if s.running and s.job.id not in keep:
                    self._stop(s, now, preempted=True)
            for job_id in ids:
                if job_id in keep and not self.active[job_id].running:
                    self._start(self.active[job_id], now)
        else:
            for choice in chosen:
                s = self.active[job_id_of(choice)]
                if not s.running and s.job.gpus <= self.free and self._place(s, choice):
                    self._start(s, now)

    def _place(self, s: _Job, choice: Choice) -> bool:
        """With MIG, whether the job's instance found room (where the policy said, or by first fit)."""
        if self.layout is None:
            return True
        if isinstance(choice, int):
            return self.layout.place(s.job.id, s.job.gpus) is not None
        try:
            return self.layout.place_at(s.job.id, s.job.gpus, choice[1], choice[2]) is not None
        except ValueError as exc:
            raise InvalidDecision(f"job {s.job.id}: {exc}") from None

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
        if self.layout is not None:
            self.layout.release(s.job.id)
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
    if rules.mig and rules.preemptive:
        raise ValueError("MIG instances are not preempted in this model")
    for j in trace:
        too_big = j.gpus not in PROFILES if rules.mig else j.gpus > rules.gpus
        if too_big or j.gpus < 1 or j.duration <= 0:
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

    def __init__(self, decisions: list[list[Choice]]):
        self.decisions = decisions
        self.used = 0

    def __call__(self, queue: list[JobView], free_gpus: int, now: float) -> list[Choice]:
        if self.used >= len(self.decisions):
            raise ReplayExhausted(f"the policy's decisions ended after {self.used}, at minute {now:.1f}")
        self.used += 1
        return self.decisions[self.used - 1]
