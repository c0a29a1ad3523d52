"""Which queue a language's run goes to, and what the page says before submit when it cannot run anywhere live.

CUDA C++ is timed only on a GPU: on the CPU tier its PTX runs on the worker's PTX executor (issue 27),
checked and its memory traffic reported, but not timed. So a CUDA C++ run goes to a serving GPU lane
when the planned routing (`labs.fleet.routing`) did not already pick one, and the exercise page says
before submit, when no GPU worker serves, that this run will be checked on the CPU and not timed.
"""

from __future__ import annotations

import redis

from gpu_worker.protocol import SERVING
from labs.fleet import heartbeats, routing
from labs.models import Exercise

GPU_PREFIX = "gpu."
CUDA_ON_CPU = (
    "No GPU worker is serving now: this CUDA C++ run goes to the CPU tier, where its PTX runs on the PTX "
    "executor (checked, with its memory report and occupancy), but is not timed; timing needs a GPU lane."
)


def serving_gpu_queue() -> str | None:
    """A GPU queue at least one live worker serves (the one with most such workers), or None."""
    try:
        beats = heartbeats.live_beats()
    except redis.RedisError:
        return None
    counts: dict[str, int] = {}
    for beat in beats:
        queue = str(beat.get("queue") or "")
        if beat.get("state") == SERVING and queue.startswith(GPU_PREFIX):
            counts[queue] = counts.get(queue, 0) + 1
    return max(sorted(counts), key=lambda q: counts[q]) if counts else None


def queue_for(exercise: Exercise, language: str, lane: str = routing.PRACTICE) -> str:
    """The planned route, except that CUDA C++ leaves a CPU queue for a serving GPU lane when one exists."""
    queue = routing.route(exercise, lane).queue
    if language != "cuda" or exercise.pool or queue.startswith(GPU_PREFIX):
        return queue
    return serving_gpu_queue() or queue


def language_notes(exercise: Exercise) -> dict[str, str]:
    """Per language offered, what the learner is told before submit ('' when the run can go ahead as usual)."""
    notes = {}
    for language in exercise.languages:
        queue = queue_for(exercise, language)
        if language == "cuda" and not queue.startswith(GPU_PREFIX):
            notes[language] = CUDA_ON_CPU
        else:
            notes[language] = heartbeats.queue_notice(queue)
    return notes
