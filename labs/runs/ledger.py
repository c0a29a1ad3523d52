"""The job ledger: the database, not the broker, says whether a run may start, which attempt it is, and when it is lost.

Celery's late acknowledgement redelivers the job of a worker that died, but it
cannot promise what a learner needs: a broker that restarts without its data
loses queued jobs, a job that kills its worker every time is redelivered for
ever, a job restored past its visibility timeout can run twice, and a result
sent twice would be stored twice. So every run's job goes through this ledger,
kept in the run's own row (`Submission.attempts`, `claimed_task`,
`lease_until`, `dispatched_at`):

- `dispatch` hands the job to the broker and notes when; a send that fails
  (the broker is down) leaves the run queued and undispatched, never a server error.
- `claim` is asked by the worker (the `labs.claim_run` task, answered through
  Celery's result backend: `gpu_worker` holds no database credentials) before it
  runs a delivery. A finished run, or one whose live lease another delivery
  holds, is not run; past `WARPLAB_MAX_ATTEMPTS` claims the run ends as an
  infrastructure error instead (`labs.runs.services.claim_run`). A granted claim is
  the attempt's number, which fences everything it reports.
- `accepts` says whether an event or result from an attempt may be recorded:
  only the current attempt of an unfinished run, so a lost attempt's stragglers
  and a redelivered result are dropped. Each accepted event renews the lease
  (`renew`): the exercise's wall-clock limit plus `WARPLAB_LOST_AFTER_SECONDS`.
- The reaper (`labs.runs.services.reap_runs`, on Celery beat) finds running runs
  whose lease ran out (`expired`) and runs whose job the broker never got or
  lost (`undelivered`: never dispatched, or queued before the broker came back
  empty, which `broker_was_reset` notices by a key of its own that vanishes with
  the broker's data). A duplicate send is harmless: its claim is refused.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

import redis
from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError

from labs.models import Submission
from labs.models.run import Status

log = logging.getLogger(__name__)

RUN_TASK = "gpu_worker.run_job"
EPOCH_KEY = "warplab.broker-epoch"  # under the broker prefix; gone when the broker restarts without its data
UNDISPATCHED_GRACE = timedelta(seconds=5)  # a send happens on commit; younger undispatched runs are still being sent


@dataclass(frozen=True)
class Claim:
    """A worker's answer: run this delivery as attempt `attempt`, or leave it (`run` false) and why."""

    run: bool
    attempt: int
    reason: str = ""
    give_up: bool = False  # the attempt cap was reached: the caller ends the run as an infrastructure error

    def to_wire(self) -> dict:
        return {"run": self.run, "attempt": self.attempt, "reason": self.reason}


def lease_seconds(submission: Submission) -> float:
    """How long a claimed attempt may stay silent before it is presumed lost."""
    wall = float((submission.exercise.limits or {}).get("wall_seconds", 30))
    return wall + settings.WARPLAB_LOST_AFTER_SECONDS


def dispatch(submission: Submission, job: dict) -> bool:
    """Send the run's job to its queue; False (and the run left undispatched for the reaper) if the broker is down."""
    try:
        current_app.send_task(RUN_TASK, args=[job], queue=submission.queue, retry=False)
    except (OperationalError, redis.RedisError, OSError) as exc:
        log.warning("run %s not dispatched (the reaper will): %s", submission.pk, exc)
        return False
    Submission.objects.filter(pk=submission.pk).update(dispatched_at=timezone.now())
    return True


def claim(submission_id: int, task_id: str) -> Claim:
    """Grant or refuse one delivery of a run's job, in the run's row under a lock."""
    now = timezone.now()
    with transaction.atomic():
        run = Submission.objects.select_for_update().select_related("exercise").filter(pk=submission_id).first()
        if run is None:
            return Claim(False, 0, "no such run")
        if run.finished:
            return Claim(False, run.attempts, "the run has finished")
        held = run.status == Status.RUNNING and run.lease_until is not None and run.lease_until > now
        # The same message delivered again means its earlier delivery ended without acknowledging it: a
        # lost worker (Celery requeues a lost pool child's job, the broker restores a dead consumer's).
        if held and run.claimed_task != task_id:
            return Claim(False, run.attempts, "another delivery holds a live lease on it")
        if run.attempts >= settings.WARPLAB_MAX_ATTEMPTS:
            return Claim(False, run.attempts, "the attempt cap was reached", give_up=True)
        run.attempts += 1
        run.claimed_task, run.status = task_id, Status.RUNNING
        run.started_at = run.started_at or now
        run.last_event_at = now
        run.lease_until = now + timedelta(seconds=lease_seconds(run))
        run.save(update_fields=["attempts", "claimed_task", "status", "started_at", "last_event_at", "lease_until"])
    return Claim(True, run.attempts)


def accepts(run: Submission, attempt: int | None) -> bool:
    """Whether a report from `attempt` may be recorded (None: a caller outside the ledger, such as the reaper)."""
    if run.finished:
        return False
    return attempt is None or attempt == run.attempts


def renew(run: Submission, now: datetime) -> dict:
    """The fields that extend a claimed attempt's lease from `now` (none for a run no attempt has claimed)."""
    if not run.attempts:
        return {}
    return {"lease_until": now + timedelta(seconds=lease_seconds(run))}


def expired(now: datetime) -> QuerySet[Submission]:
    """Running runs whose attempt is presumed lost: its lease ran out (or, unclaimed, it went silent too long)."""
    running = Submission.objects.filter(status=Status.RUNNING).select_related("exercise")
    leased = running.filter(lease_until__lt=now)
    silent = [
        s.pk
        for s in running.filter(lease_until__isnull=True)
        if now - (s.last_event_at or s.created_at) > timedelta(seconds=lease_seconds(s))
    ]
    return leased | running.filter(pk__in=silent)


def requeue(run: Submission) -> None:
    """Hand a lost attempt's run back to the queue, to be sent again (`undelivered`); its next claim is attempt n+1."""
    Submission.objects.filter(pk=run.pk, status=Status.RUNNING).update(
        status=Status.QUEUED, lease_until=None, claimed_task="", dispatched_at=None
    )


def broker_was_reset() -> bool:
    """True once after the broker came back without its data (or the first time it is asked)."""
    url = settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return False
    key = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("global_keyprefix", "") + EPOCH_KEY
    with redis.Redis.from_url(url, socket_timeout=5) as client:
        return bool(client.set(key, timezone.now().isoformat(), nx=True))


def undelivered(now: datetime, reset: bool) -> QuerySet[Submission]:
    """Queued runs whose job the broker does not hold: never sent, or sent before it lost its data (`reset`)."""
    queued = Submission.objects.filter(status=Status.QUEUED).select_related("exercise", "owner")
    lost = Q(dispatched_at__isnull=True, created_at__lt=now - UNDISPATCHED_GRACE) | Q(
        dispatched_at__isnull=True, attempts__gt=0
    )
    if reset:
        lost |= Q(dispatched_at__lt=now)
    return queued.filter(lost)
