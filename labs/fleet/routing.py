"""Where a run goes and how long it waits: the least-loaded pool of its lane and its place (the GPU-time caps are
`labs.fleet.budgets`').

Lanes: a graded (or ranked) run goes only to an exclusive pool (whole GPUs, MIG instances); a
practice run may go to any pool, and from a shared one (MPS, time-sliced) its numbers say "shared
GPU: indicative". An exercise that names a pool is sent there. Otherwise the candidates are the
planned pools of the lane with at least one live serving worker (heartbeats); each is scored by the
runs in its broker queue (Redis) plus those running, over its live workers, times its measured job
time, and the least is taken. No candidate: the site's default queue, as before the plan existed,
where `labs.fleet.heartbeats.queue_notice` tells the learner why the run waits. No run is dropped for want of a
worker: the queue keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis
from django.conf import settings

from labs.fleet import heartbeats
from labs.fleet.capacity import wait_seconds, wait_words
from labs.fleet.stats import job_time
from labs.models import Exercise, Pool, Submission
from labs.models.gpu import Lane
from labs.models.run import Status

GRADED, PRACTICE = "graded", "practice"
SHARED_WORDS = "shared GPU: indicative"


@dataclass(frozen=True)
class Route:
    queue: str
    why: str


def _live_serving(beats: list[dict]) -> dict[str, int]:
    live: dict[str, int] = {}
    for beat in beats:
        if beat.get("state") == "serving":
            live[str(beat.get("queue"))] = live.get(str(beat.get("queue")), 0) + 1
    return live


def _running(queue: str) -> int:
    return Submission.objects.filter(queue=queue, status=Status.RUNNING).count()


def route(exercise: Exercise, lane: str = PRACTICE) -> Route:
    """The queue this run goes to, and why (for logs and tests)."""
    if exercise.pool:
        return Route(exercise.pool, f"the exercise requires {exercise.pool}")
    pools = Pool.objects.all() if lane == PRACTICE else Pool.objects.filter(lane=Lane.EXCLUSIVE)
    queues = [p.queue for p in pools]
    if not queues:
        return Route(settings.WARPLAB_DEFAULT_QUEUE, "no planned pool fits this lane: the default queue")
    try:
        live = _live_serving(heartbeats.live_beats())
        lengths = heartbeats.queue_lengths([q for q in queues if live.get(q)])
    except redis.RedisError:
        return Route(settings.WARPLAB_DEFAULT_QUEUE, "the fleet cannot be read: the default queue")
    scored = []
    for queue, waiting in lengths.items():
        load = (waiting + _running(queue)) / live[queue]
        scored.append((load * job_time(queue).seconds, load, queue))
    if not scored:
        return Route(settings.WARPLAB_DEFAULT_QUEUE, f"no live worker serves a {lane} pool: the default queue")
    expected, _, queue = min(scored)
    return Route(queue, f"least loaded {lane} pool (about {expected:.1f} s of work per worker ahead)")


def is_shared(queue: str) -> bool:
    """Whether runs on `queue` share their GPU (an MPS or time-sliced pool): their numbers are indicative."""
    return Pool.objects.filter(name=queue.removeprefix("gpu."), lane=Lane.SHARED).exists()


def place(submission: Submission) -> dict:
    """The run's place in its queue: how many stored runs wait before it, and the expected wait, in words."""
    ahead = Submission.objects.filter(
        queue=submission.queue, status=Status.QUEUED, created_at__lt=submission.created_at
    ).count()
    try:
        live = _live_serving(heartbeats.live_beats()).get(submission.queue, 0)
    except redis.RedisError:
        live = 0
    measured = job_time(submission.queue)
    wait = wait_seconds(ahead, _running(submission.queue), live, measured.seconds)
    return {
        "ahead": ahead,
        "expected_wait_seconds": None if wait is None else round(wait, 1),
        "wait_words": wait_words(ahead, wait),
        "job_time_words": measured.words,
    }
