"""The points a run's roofline is drawn beside: the learner's earlier submissions and the reference's newest run.

Read from stored results when a job is built, so the worker, which has no
database, can draw them. Only runs from the same queue count (a queue is one
kind of slice, so one backend); the worker then leaves out any measured on
another device than its own. A result above a roof is impossible and left out.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils import timezone

from gpu_worker.figures.analysis import result_point
from gpu_worker.protocol import RooflinePoint
from labs.models import Submission
from labs.models.run import Status, Verdict

HISTORY_LIMIT = 20


def _timed_runs(submission: Submission) -> QuerySet[Submission]:
    """Finished runs on the submission's exercise and queue whose result has metrics, newest first."""
    return (
        Submission.objects.filter(exercise_id=submission.exercise_id, queue=submission.queue, status=Status.DONE)
        .filter(result__metrics__isnull=False)
        .exclude(result__metrics=None)
        .exclude(pk=submission.pk)
        .order_by("-created_at", "-id")
        .only("id", "created_at", "language", "result")
    )


def history_points(submission: Submission) -> list[RooflinePoint]:
    """The owner's newest earlier runs of this exercise and language, one point each (largest timed size)."""
    earlier = _timed_runs(submission).filter(
        owner_id=submission.owner_id, language=submission.language, pk__lt=submission.pk
    )
    points: list[RooflinePoint] = []
    for run in earlier.iterator(chunk_size=HISTORY_LIMIT):
        when = timezone.localtime(run.created_at).strftime("%Y-%m-%d %H:%M")
        point = result_point(run.result, f"#{run.pk}, {when}", run.pk)
        if point is not None:
            points.append(point)
            if len(points) == HISTORY_LIMIT:
                break
    return points


def reference_point(submission: Submission) -> RooflinePoint | None:
    """The newest accepted, timed run (anyone's) of one of the exercise's reference solutions; None before one ran."""
    sources = list((submission.exercise.references or {}).values())
    if not sources:
        return None
    runs = _timed_runs(submission).filter(verdict=Verdict.ACCEPTED, source__in=sources)
    for run in runs.iterator(chunk_size=HISTORY_LIMIT):
        point = result_point(run.result, f"reference ({run.language}), #{run.pk}", run.pk)
        if point is not None:
            return point
    return None
