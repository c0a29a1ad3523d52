"""Leaderboards per assignment exercise and per assignment, from graded runs only.

An exercise's board ranks each student's fastest accepted run of its largest size inside the assignment's
window (up to the student's hard close) on an exclusive slice; a run above the roof, or one whose
re-execution in a regrade failed, is never ranked. Ties go to the earlier submission. The assignment's board
ranks students by their total score. Names are pseudonyms unless the course chose named boards.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from labs.courses import access, grading
from labs.models import Assignment, AssignmentExercise, Membership, Submission
from labs.models.course import BoardNames, Role
from labs.models.run import Status, Verdict


@dataclass
class Entry:
    rank: int
    name: str
    seconds: float | None
    score: float | None
    submitted_at: datetime
    device: str
    slice: str
    submission_id: int


def names(assignment: Assignment) -> dict[int, str]:
    """user id -> the name a board shows for them."""
    named = assignment.course.board_names == BoardNames.NAMED
    shown = {}
    for m in Membership.objects.filter(course=assignment.course, role=Role.STUDENT).select_related("user"):
        full = m.user.get_full_name() or m.user.get_username()
        shown[m.user_id] = full if named else (m.pseudonym or f"student-{m.pk}")
    return shown


def _rankable(submission: Submission) -> tuple[float, dict[str, Any]] | None:
    metrics = grading.largest_timed(submission.result)
    if metrics is None or metrics.get("above_roof") or grading.practice_reason(submission):
        return None
    seconds = grading.seconds_of(metrics)
    if seconds is None or grading.failed_recheck(submission):
        return None
    return seconds, metrics


def exercise_board(item: AssignmentExercise) -> list[Entry]:
    assignment = item.assignment
    shown = names(assignment)
    best: dict[int, tuple[float, datetime, Submission]] = {}
    for student in access.students(assignment.course):
        close = grading.dates_for(assignment, student).close_at
        runs = Submission.objects.filter(
            owner=student,
            exercise=item.exercise,
            verdict=Verdict.ACCEPTED,
            status=Status.DONE,
            regrade_of__isnull=True,
            created_at__gte=assignment.release_at,
            created_at__lte=close,
        ).order_by("created_at", "id")
        for run in runs:
            found = _rankable(run)
            if found is None:
                continue
            key = (found[0], run.created_at)
            if student.pk not in best or key < best[student.pk][:2]:
                best[student.pk] = (found[0], run.created_at, run)
    ordered = sorted(best.items(), key=lambda kv: (kv[1][0], kv[1][1]))
    return [
        Entry(
            rank=n,
            name=shown.get(uid, "?"),
            seconds=seconds,
            score=None,
            submitted_at=at,
            device=str((run.result or {}).get("device") or ""),
            slice=run.queue,
            submission_id=run.pk,
        )
        for n, (uid, (seconds, at, run)) in enumerate(ordered, start=1)
    ]


def assignment_board(assignment: Assignment) -> list[Entry]:
    """Students with at least one graded run, by total score, ties to the earlier last counted run."""
    shown = names(assignment)
    items = list(assignment.items.select_related("exercise", "assignment"))
    totals = []
    for student in access.students(assignment.course):
        grades = [grading.grade(item, student) for item in items]
        counted = [g.counted for g in grades if g.counted is not None]
        if not counted:
            continue
        last = max(c.submission.created_at for c in counted)
        devices = sorted({c.device for c in counted if c.device})
        slices = sorted({c.submission.queue for c in counted})
        total = sum(c.score or 0.0 for c in counted)
        totals.append((-total, last, student.pk, devices, slices, counted[-1].submission.pk))
    totals.sort(key=lambda t: (t[0], t[1]))
    return [
        Entry(
            rank=n,
            name=shown.get(uid, "?"),
            seconds=None,
            score=round(-neg, 3),
            submitted_at=last,
            device=", ".join(devices),
            slice=", ".join(slices),
            submission_id=sid,
        )
        for n, (neg, last, uid, devices, slices, sid) in enumerate(totals, start=1)
    ]
