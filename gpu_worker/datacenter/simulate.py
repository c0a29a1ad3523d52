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

With `sharing: mig` each GPU is cut into MIG instances (`gpu_worker.datacenter.mig`): a
job's `gpus` is the compute slices of the one instance it asks for, `free_gpus`
counts free compute slices on every GPU together, and a job starts only where
its profile can be placed, so free slices spread over GPUs may hold nothing
(fragmentation). A running job's view says where it sits (`placement`). The
answer may place a job itself: `(job id, GPU, first memory slice)` in place of
its id; a bare id gets the first fit.

With `sharing: mps` a GPU runs up to four one-GPU jobs at once
(`gpu_worker.datacenter.mps`), which slow each other down by what they ask of
the SMs and of the memory bandwidth (each job's `sm` and `bw` are in its view);
`free_gpus` counts the GPUs with no job. `(job id, GPU)` puts a job beside that
GPU's others; a bare id gets an empty GPU of its own. Shared clusters are not
preemptive here: moving an instance or a process is a checkpoint and a restart.

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
from gpu_worker.datacenter.mps import CLIENTS, MpsLayout
from gpu_worker.datacenter.trace import TraceJob

EPS = 1e-9
Choice = int | tuple[int, ...]  # a job id; with MIG (job id, GPU, first memory slice); with MPS (job id, GPU)
PLACED = {"mig": "(job id, GPU, first memory slice)", "mps": "(job id, GPU)"}
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
    sharing: str = "none"  # "mig": GPUs cut into MIG instances; "mps": up to four jobs a GPU, slowing each other

    @property
    def capacity(self) -> int:
        """What utilisation counts: GPUs, or with MIG their compute slices, or with MPS their client places."""
        return self.gpus * {"mig": COMPUTE_SLICES, "mps": CLIENTS}.get(self.sharing, 1)

    @property
    def placed_length(self) -> int:
        """How long a placed answer item is: 3 with MIG, 2 with MPS, 0 where a policy places nothing."""
        return {"mig": 3, "mps": 2}.get(self.sharing, 0)


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
    placement: tuple[int, int] | None = None  # a running job's (GPU, first memory slice); with MPS (GPU, 0)
    sm: float | None = None  # with MPS: the share of the SMs it keeps busy alone
    bw: float | None = None  # ... and the share of the memory bandwidth


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
            j.sm if j.sm or j.bw else None,
            j.bw if j.sm or j.bw else None,
        )


def _placed(item: object, length: int, words: str) -> tuple[object, tuple[int, ...] | None]:
    """A placed answer item split into the id and the place; a bare id as it is."""
    if not isinstance(item, tuple | list):
        return item, None
    if len(item) != length or not all(isinstance(v, int) and not isinstance(v, bool) for v in item):
        raise InvalidDecision(f"the policy returned {item!r}: a placed job is {words}")
    return item[0], tuple(item[1:])


def job_id_of(choice: Choice) -> int:
    return choice if isinstance(choice, int) else choice[0]


def as_ids(answer: object, queue_ids: set[int], sharing: str = "none") -> list[Choice]:
    """The policy's answer as distinct queued job ids (placed ones when shared); InvalidDecision says what is wrong."""
    if isinstance(answer, str | bytes) or not isinstance(answer, Iterable):
        raise InvalidDecision(f"the policy must return a list of job ids, not {type(answer).__name__}")
    ids: list[Choice] = []
    seen: set[int] = set()
    for item in answer:
        place = None
        if sharing in PLACED:
            item, place = _placed(item, Rules(1, sharing=sharing).placed_length, PLACED[sharing])
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
        self.mig = MigLayout(rules.gpus) if rules.sharing == "mig" else None
        self.mps = MpsLayout(rules.gpus) if rules.sharing == "mps" else None
        self.active: dict[int, _Job] = {}
        self.schedule = Schedule()

    def decide(self, policy: Policy, now: float) -> None:
        if len(self.schedule.decisions) >= self.rules.max_decisions:
            raise Stalled(f"the policy was asked {self.rules.max_decisions} times and the trace is still not done")
        ordered = sorted(self.active.values(), key=lambda s: (s.job.submit, s.job.id))
        layout = self.mig or self.mps
        where = layout.where if layout else {}
        queue = [s.view(now, self.rules.reveal_duration, where.get(s.job.id)) for s in ordered]
        free = self.mps.empty_gpus() if self.mps else self.free
        chosen = as_ids(policy(queue, free, now), set(self.active), self.rules.sharing)
        self.schedule.decisions.append(chosen)
        self._apply(chosen, now)

    def _apply(self, chosen: list[Choice], now: float) -> None:
        if self.rules.preemptive:  # never with MIG or MPS: every choice is a job id
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
                counted_out = self.mps is None and s.job.gpus > self.free
                if not s.running and not counted_out and self._place(s, choice):
                    self._start(s, now)

    def _place(self, s: _Job, choice: Choice) -> bool:
        """Shared, whether the job found room (where the policy said, or by the default placement)."""
        job_id, size = s.job.id, s.job.gpus
        place: tuple[int, ...] = () if isinstance(choice, int) else choice[1:]
        try:
            if self.mig is not None:
                where = self.mig.place_at(job_id, size, *place) if place else self.mig.place(job_id, size)
            elif self.mps is not None:
                where = self.mps.place_at(job_id, *place) if place else self.mps.place(job_id)
            else:
                return True
        except ValueError as exc:
            raise InvalidDecision(f"job {job_id}: {exc}") from None
        return where is not None

    def rates(self) -> dict[int, float]:
        """Each running job's speed as a fraction of its speed alone: 1 unless MPS neighbours slow it."""
        if self.mps is None:
            return {s.job.id: 1.0 for s in self.active.values() if s.running}
        return self.mps.rates({s.job.id: (s.job.sm, s.job.bw) for s in self.active.values() if s.running})

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
        for layout in (self.mig, self.mps):
            if layout is not None:
                layout.release(s.job.id)
        if preempted:
            s.preemptions += 1
            self.schedule.preemptions += 1

    def advance(self, now: float, until: float, rates: dict[int, float]) -> None:
        dt = until - now
        for s in self.active.values():
            if s.running:
                s.remaining -= dt * rates[s.job.id]
                s.executed += dt
                s.attained += dt * s.job.gpus
        for s in list(self.active.values()):
            if s.running and s.remaining <= EPS * max(1.0, s.job.duration):
                self._stop(s, until, preempted=False)
                self.schedule.finish[s.job.id] = until
                del self.active[s.job.id]


def simulate(trace: list[TraceJob], rules: Rules, policy: Policy) -> Schedule:
    """Run the whole trace under `policy`; raises InvalidDecision or Stalled (and whatever the policy raises)."""
    if rules.sharing != "none" and rules.preemptive:
        raise ValueError(f"a cluster shared through {rules.sharing.upper()} is not preempted in this model")
    for j in trace:
        too_big = {"mig": j.gpus not in PROFILES, "mps": j.gpus != 1}.get(rules.sharing, j.gpus > rules.gpus)
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
        rates = cluster.rates()
        times = [now + s.remaining / rates[s.job.id] for s in running]
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
        cluster.advance(now, next_time, rates)
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
