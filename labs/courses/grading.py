"""Grades from measurements: which runs count, each student's dates, late credit, and each exercise's score.

Nothing here writes. An assignment's grading basis says which runs count (`not_counted_reason`). Correctness: a
run counts on any tier whose outputs the learner's code could not have made, a GPU lane or the CPU tier's PTX
executor, as the engine recorded it (`executed_by` in the result; a run the CPU tier's fallback ran, Numba's
simulator or Triton's interpreter, is not counted and says why); it scores the points when accepted, else 0.
Performance: a run counts for grades (and ranks, whatever the basis) only when it was measured on an exclusive slice:
the `cuda` backend on a pool of the fleet plan whose lane is exclusive (a whole GPU or a MIG slice; a queue
the plan does not know counts when it is named `gpu.<gpu>.full` or `gpu.<gpu>.mig*`), with no other process
seen on the GPU while it was timed. Anything else (the simulator, MPS, time-slicing) is
"practice, indicative". Within an assignment's window a student's score for an exercise is

    points x (correctness_weight + (1 - correctness_weight) x min(1, performance / goal)) x late credit

for an accepted run (0 otherwise), where performance is the fraction of the slice's calibrated roof the largest
size reached (rule `roof`) or the speed-up over the reference's newest graded run on the same device (rule
`speedup`). Late credit is 1 on time, `late_credit[d - 1]` for a run d started days late, 0 past the curve;
a run after the hard close is practice. Selection `best` counts the highest score after late credit (ties:
the earlier run), `last` the newest graded run. A regraded run is scored from its re-execution.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gpu_worker.protocol import FALLBACKS
from labs.models import Assignment, AssignmentExercise, Override, Pool, RegradeRun, Submission
from labs.models.course import GradingBasis, GradingRule, Selection
from labs.models.gpu import Lane
from labs.models.run import Status, Verdict

PRACTICE = "practice, indicative"
NOT_COUNTED = "not counted"
EXCLUSIVE_SLICES = ("full", "mig")


# --- lanes ---------------------------------------------------------------------------------------


def slice_of(submission: Submission) -> str:
    """The slice kind a run was queued for: the last part of its queue (`full`, `mig1g`, `mps30`, `sim`)."""
    return submission.queue.rsplit(".", 1)[-1] if submission.queue.startswith("gpu.") else submission.queue


def not_counted_reason(submission: Submission, basis: str) -> str:
    """Why a run does not count for an assignment graded on `basis`; '' when it does."""
    if basis == GradingBasis.CORRECTNESS:
        return correctness_reason(submission)
    return practice_reason(submission)


def correctness_reason(submission: Submission) -> str:
    """Why a run does not count for correctness; '' when its verdict came from a GPU lane or the PTX executor.

    A verdict reached before any kernel ran (a compile error, a rejection) counts too: no learner process made it
    better than it is. A run the CPU tier could not run at all (`not_run`) or that failed on our side does not.
    """
    result = submission.result or {}
    verdict = submission.verdict
    if verdict == Verdict.ERROR:
        return f"{NOT_COUNTED}: the run failed on our side, not the student's"
    if verdict == Verdict.NOT_RUN:
        return f"{NOT_COUNTED}: the CPU tier cannot run this kernel; a GPU lane can"
    if result.get("backend") == "cuda" or verdict in (Verdict.COMPILE_ERROR, Verdict.REJECTED):
        return ""
    ran = result.get("executed_by")
    if ran == "ptx_executor":
        return ""
    if ran in FALLBACKS:
        return (
            f"{NOT_COUNTED}: the CPU tier ran this kernel on {FALLBACKS[ran]}, its fallback for PTX the executor "
            "cannot run, where the student's own code makes the outputs; a run on a GPU lane counts"
        )
    return (
        f"{NOT_COUNTED}: the result does not say the PTX executor made its outputs (a run from before the engine "
        "said so, or no kernel: a scheduling policy runs as the student's own Python)"
    )


def practice_reason(submission: Submission) -> str:
    """Why a run does not count for performance grades and ranks; '' when it does."""
    result = submission.result or {}
    if result.get("backend") != "cuda":
        return f"{PRACTICE}: the {result.get('backend') or 'unknown'} backend measures no GPU time"
    kind = slice_of(submission)
    pool = Pool.objects.filter(name=submission.queue.removeprefix("gpu.")).only("lane").first()
    exclusive = pool.lane == Lane.EXCLUSIVE if pool is not None else kind.startswith(EXCLUSIVE_SLICES)
    if not exclusive:
        return f"{PRACTICE}: a shared slice ({kind}), not a whole GPU or a MIG slice"
    if any(size.get("shared_gpu") for size in _sizes(result)):
        return f"{PRACTICE}: another process used the GPU while this run was timed"
    return ""


def _sizes(result: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted((result.get("metrics") or {}).get("sizes") or [], key=lambda m: m.get("index", 0))


def largest_timed(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """The metrics of the largest timed size, or None when nothing was timed."""
    timed = [m for m in _sizes(result or {}) if m.get("flop_rate") is not None or m.get("median_seconds")]
    return timed[-1] if timed else None


def roof_fraction(metrics: dict[str, Any]) -> float | None:
    """Achieved / attainable on this slice's calibrated roof: the larger of the two % of ceilings."""
    pcts = [p for p in (metrics.get("bandwidth_pct"), metrics.get("flop_pct")) if p is not None]
    return max(pcts) / 100.0 if pcts else None


def seconds_of(metrics: dict[str, Any]) -> float | None:
    if metrics.get("median_seconds"):
        return float(metrics["median_seconds"])
    if metrics.get("flop_rate") and metrics.get("flops"):
        return float(metrics["flops"]) / float(metrics["flop_rate"])
    return None


def failed_recheck(submission: Submission) -> bool:
    """True when a regrade re-executed this run and the re-execution was not accepted or went above the roof."""
    for link in RegradeRun.objects.filter(original=submission).select_related("rerun"):
        rerun = link.rerun
        if rerun.finished and (rerun.verdict != Verdict.ACCEPTED or _above_roof(rerun.result)):
            return True
    return False


def _above_roof(result: dict[str, Any] | None) -> bool:
    return any(m.get("above_roof") for m in _sizes(result or {}))


# --- dates ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dates:
    release_at: datetime
    due_at: datetime
    close_at: datetime
    source: str  # "assignment", "student override" or "group override (<name>)"


def dates_for(assignment: Assignment, student: Any) -> Dates:
    """A student's own override, else their groups' latest, else the assignment's dates."""
    mine = Override.objects.filter(assignment=assignment, student=student).first()
    if mine is not None:
        return Dates(assignment.release_at, mine.due_at, mine.close_at, "student override")
    groups = Override.objects.filter(assignment=assignment, group__members=student).select_related("group")
    best = max(groups, key=lambda o: (o.due_at, o.close_at), default=None)
    if best is not None:
        return Dates(assignment.release_at, best.due_at, best.close_at, f"group override ({best.group.name})")
    return Dates(assignment.release_at, assignment.due_at, assignment.close_at, "assignment")


def late_days(at: datetime, dates: Dates) -> int:
    """Whole days (rounded up) a run started after the due date; 0 on time."""
    late = (at - dates.due_at).total_seconds()
    return 0 if late <= 0 else math.ceil(late / 86400)


def late_credit(assignment: Assignment, days: int) -> float:
    if days <= 0:
        return 1.0
    curve = assignment.late_credit or []
    return float(curve[days - 1]) if days <= len(curve) else 0.0


# --- scores --------------------------------------------------------------------------------------


@dataclass
class Scored:
    """One run of a student on one exercise, as the grade sees it."""

    submission: Submission
    measured: Submission  # the run whose measurements count: the submission, or its newest re-execution
    late_days: int
    credit: float
    score: float | None  # None: practice, does not count
    reason: str  # why it is practice, or ''
    performance: float | None
    seconds: float | None
    roof_pct: float | None
    device: str
    harness_version: int

    @property
    def ms(self) -> float | None:
        return None if self.seconds is None else 1000 * self.seconds


def reference_seconds(item: AssignmentExercise, device: str) -> float | None:
    """The newest accepted graded run of one of the exercise's references on `device`: its largest size's time."""
    sources = list((item.exercise.references or {}).values())
    runs = Submission.objects.filter(
        exercise=item.exercise, verdict=Verdict.ACCEPTED, status=Status.DONE, source__in=sources
    ).order_by("-created_at", "-id")
    for run in runs[:50]:
        if (run.result or {}).get("device") == device and not practice_reason(run):
            metrics = largest_timed(run.result)
            if metrics and not metrics.get("above_roof") and (s := seconds_of(metrics)):
                return s
    return None


def _measured(submission: Submission) -> tuple[Submission, int]:
    link = (
        RegradeRun.objects.filter(original=submission, rerun__status=Status.DONE)
        .select_related("rerun")
        .order_by("-id")
        .first()
    )
    if link is None:
        return submission, submission.exercise_version or submission.exercise.version
    return link.rerun, link.harness_version


def score_run(
    item: AssignmentExercise, submission: Submission, dates: Dates, rerun: RegradeRun | None = None
) -> Scored:
    """Score one run under its assignment's rule, its late credit and lane (measured by `rerun` when given)."""
    assignment = item.assignment
    days = late_days(submission.created_at, dates)
    credit = late_credit(assignment, days)
    measured, version = (rerun.rerun, rerun.harness_version) if rerun else _measured(submission)
    result = measured.result or {}
    metrics = largest_timed(result) or {}
    basis = assignment.grading_basis
    reason = not_counted_reason(measured, basis) if measured.finished else "not finished"
    if not reason and submission.created_at > dates.close_at:
        reason = "after the hard close: practice"
    roof = roof_fraction(metrics) if metrics else None
    seconds = seconds_of(metrics) if metrics else None
    device = str(result.get("device") or "")
    performance: float | None = None
    if assignment.rule == GradingRule.ROOF:
        performance = roof
    elif seconds and (ref := reference_seconds(item, device)):
        performance = ref / seconds
    score: float | None = None
    if not reason:
        if basis == GradingBasis.CORRECTNESS:
            score = round(item.points * credit, 3) if measured.verdict == Verdict.ACCEPTED else 0.0
        elif measured.verdict != Verdict.ACCEPTED or metrics.get("above_roof"):
            score = 0.0
        else:
            fraction = min(1.0, (performance or 0.0) / item.goal) if item.goal > 0 else 1.0
            weight = assignment.correctness_weight
            score = round(item.points * (weight + (1 - weight) * fraction) * credit, 3)
    return Scored(
        submission=submission,
        measured=measured,
        late_days=days,
        credit=credit,
        score=score,
        reason=reason,
        performance=performance,
        seconds=seconds,
        roof_pct=None if roof is None else 100 * roof,
        device=device,
        harness_version=version,
    )


def student_runs(item: AssignmentExercise, student: Any) -> list[Submission]:
    """A student's own runs of the exercise from the release on, oldest first; re-executions left out."""
    return list(
        Submission.objects.filter(
            owner=student, exercise=item.exercise, created_at__gte=item.assignment.release_at, regrade_of__isnull=True
        )
        .select_related("exercise")
        .order_by("created_at", "id")
    )


@dataclass
class Grade:
    """A student's grade on one exercise: the run that counts and how it was chosen."""

    item: AssignmentExercise
    dates: Dates
    attempts: int
    counted: Scored | None
    runs: list[Scored]

    @property
    def score(self) -> float | None:
        return None if self.counted is None else self.counted.score


def grade(item: AssignmentExercise, student: Any, dates: Dates | None = None) -> Grade:
    """The counted run of `student` on `item` under the assignment's selection."""
    dates = dates or dates_for(item.assignment, student)
    runs = [score_run(item, s, dates) for s in student_runs(item, student)]
    graded = [r for r in runs if r.score is not None]
    counted: Scored | None = None
    if graded:
        if item.assignment.selection == Selection.LAST:
            counted = graded[-1]
        else:
            counted = max(graded, key=lambda r: (r.score, -r.submission.created_at.timestamp()))
    on_time_or_late = [r for r in runs if r.submission.created_at <= dates.close_at]
    return Grade(item=item, dates=dates, attempts=len(on_time_or_late), counted=counted, runs=runs)
