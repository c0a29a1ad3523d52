"""What a layout means for a class: concurrent runs per lane, runs a minute it can serve, the expected wait.

A model, and every figure it makes says so: submissions arrive at random (Poisson) at N a minute,
each takes the measured GPU-time of one job on a whole GPU times its slice's slowdown
(`fleet_plan.share`), and each lane's workers form one M/M/c queue (Erlang C). Its inputs are the
admin's: the job time is a parameter they take from measured runs (the dashboard's last hour).
"""

from __future__ import annotations

from dataclasses import dataclass

from labs.fleet.plan import SliceShare

MODEL_WORDS = "model: M/M/c queue (Erlang C), Poisson arrivals, job time scaled by each slice's share of the GPU"


@dataclass(frozen=True)
class LaneCapacity:
    """One lane of a layout under the model."""

    lane: str
    workers: int
    runs_per_minute: float  # what the lane can serve at most
    utilisation: float | None  # of the lane at the given arrival rate; None: no workers
    wait_seconds: float | None  # mean wait in the queue; None: no workers, or the queue grows without bound
    words: str


def erlang_c_wait(arrivals_per_s: float, service_s: float, servers: int) -> float | None:
    """Mean time in the queue of an M/M/c queue; None when it is unstable (the queue grows without bound)."""
    if servers <= 0 or service_s <= 0:
        return None
    a = arrivals_per_s * service_s  # offered load, in servers
    rho = a / servers
    if rho >= 1:
        return None
    if a == 0:
        return 0.0
    # P(wait) by the Erlang C formula, summed in a numerically stable way
    term, total = 1.0, 1.0
    for k in range(1, servers):
        term *= a / k
        total += term
    last = term * a / servers / (1 - rho)
    p_wait = last / (total + last)
    return p_wait * service_s / (servers - a)


def lane_capacity(lane: str, shares: list[SliceShare], per_minute: float, job_seconds: float) -> LaneCapacity:
    """The lane's workers taken as one queue whose service time is the mean of theirs (weighted by workers)."""
    workers = sum(s.concurrency for s in shares)
    if workers == 0:
        return LaneCapacity(lane, 0, 0.0, None, None, f"No {lane} slices: runs of this lane have nowhere to go.")
    service = sum(s.concurrency * job_seconds * s.service_factor for s in shares) / workers
    capacity = 60 * workers / service
    rho = per_minute / capacity
    wait = erlang_c_wait(per_minute / 60, service, workers)
    if wait is None:
        words = (
            f"{workers} concurrent runs serve at most {capacity:.1f} runs a minute; at {per_minute:g} a minute "
            f"the queue grows without bound ({MODEL_WORDS})."
        )
    else:
        words = (
            f"{workers} concurrent runs, at most {capacity:.1f} runs a minute; at {per_minute:g} a minute "
            f"{100 * rho:.0f}% busy, mean wait {_seconds(wait)} ({MODEL_WORDS})."
        )
    return LaneCapacity(lane, workers, capacity, rho, wait, words)


def _seconds(s: float) -> str:
    if s < 10:
        return f"{s:.1f} s"
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.1f} min"


def wait_seconds(ahead: int, running: int, workers: int, job_seconds: float) -> float | None:
    """How long until a run with `ahead` queued before it starts: the runs before it served `workers` at a time."""
    if workers <= 0:
        return None
    busy = min(running, workers)
    return (ahead + busy) / workers * job_seconds if ahead + busy >= workers else 0.0


def wait_words(ahead: int, wait: float | None) -> str:
    """'3 ahead of you, about 20 s'."""
    if wait is None:
        return f"{ahead} ahead of you; no worker serves this queue now"
    if wait < 1:
        return f"{ahead} ahead of you, starting now"
    return f"{ahead} ahead of you, about {_seconds(round(wait))}"
