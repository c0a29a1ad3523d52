"""What the runs themselves say about the fleet: job GPU-time as measured, throughput, the oldest waiting run.

Read from stored submissions (started_at to finished_at is the time a worker held the slice),
so every figure here is measured and says over how many runs.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count, Min
from django.utils import timezone

from labs.models import Submission
from labs.models.run import Status

DEFAULT_JOB_SECONDS = 2.0  # when no run was measured yet; said so wherever it is used


@dataclass(frozen=True)
class JobTime:
    seconds: float
    runs: int
    words: str


def job_time(queue: str | None = None, within: timedelta = timedelta(days=1)) -> JobTime:
    """The median time a worker held its slice per run (queue `gpu.*` unless one is named), and from how many."""
    since = timezone.now() - within
    runs = Submission.objects.filter(status=Status.DONE, started_at__isnull=False, finished_at__gte=since)
    runs = runs.filter(queue=queue) if queue else runs.filter(queue__startswith="gpu.")
    held = [(f - s).total_seconds() for s, f in runs.values_list("started_at", "finished_at")[:2000] if f and f >= s]
    if not held:
        where = queue or "any GPU queue"
        return JobTime(DEFAULT_JOB_SECONDS, 0, f"no run measured on {where} yet: {DEFAULT_JOB_SECONDS:g} s assumed")
    median = statistics.median(held)
    return JobTime(median, len(held), f"measured: median of {len(held)} runs in the last day, {median:.2f} s")


def queue_stats(queues: list[str]) -> dict[str, dict]:
    """Per queue: runs waiting and running (stored state), the oldest waiting one, runs finished in the last hour."""
    now = timezone.now()
    found = {q: {"queued": 0, "running": 0, "oldest_queued": None, "done_last_hour": 0} for q in queues}
    waiting = (
        Submission.objects.filter(queue__in=queues, status__in=[Status.QUEUED, Status.RUNNING])
        .values("queue", "status")
        .annotate(n=Count("id"), oldest=Min("created_at"))
    )
    for row in waiting:
        entry = found[row["queue"]]
        entry[row["status"]] = row["n"]
        if row["status"] == Status.QUEUED:
            entry["oldest_queued"] = (now - row["oldest"]).total_seconds()
    done = (
        Submission.objects.filter(queue__in=queues, finished_at__gte=now - timedelta(hours=1))
        .values("queue")
        .annotate(n=Count("id"))
    )
    for row in done:
        found[row["queue"]]["done_last_hour"] = row["n"]
    return found
