"""GPU-time budgets: what a learner's runs (and their courses' students' runs) have held a GPU slice for over a
rolling day or week, against the caps that apply to them, checked at submit and said beside the queue position.

A run is charged its measured time on the slice, from the worker's start to its result (`started_at` to
`finished_at`), on GPU queues only: practice on the CPU tier (`sim`) is free. The caps: the site's per-learner
and per-course ones a day (`WARPLAB_GPU_SECONDS_PER_DAY`, `WARPLAB_COURSE_GPU_SECONDS_PER_DAY`; 0: none), and
each course's own (`Course.gpu_seconds_per_student` and `gpu_seconds_for_course` a `gpu_period`, set by its
instructors, the latter never above the `gpu_seconds_ceiling` an admin sets). A learner's run counts against
every course they study in. Read-only: the courses' services write the budgets.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import F, Sum
from django.utils import timezone

from labs.models import Course, Membership, Submission
from labs.models.course import BudgetPeriod, Role

PERIODS = {BudgetPeriod.DAY: timedelta(days=1), BudgetPeriod.WEEK: timedelta(days=7)}
PERIOD_WORDS = {BudgetPeriod.DAY: "the last 24 hours", BudgetPeriod.WEEK: "the last 7 days"}
FREE = "Runs on the CPU tier are free."


class OverGpuBudget(Exception):
    """A GPU run refused: `message` says whose GPU time is spent, how much, and when it comes back."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Budget:
    """One cap that applies to a learner: `mine` (their own runs) or their course's (all its students')."""

    mine: bool
    course: str  # the course's title; "" for the site's own caps
    period: str
    limit: float
    used: float
    course_pk: int | None = None

    @property
    def left(self) -> float:
        return max(0.0, self.limit - self.used)

    @property
    def of_whom(self) -> str:
        """Whose GPU-seconds, and how many: "your 600 GPU-seconds in GPU Programming"."""
        amount = f"{self.limit:.0f} GPU-seconds"
        if self.mine:
            return f"your {amount} in {self.course}" if self.course else f"your {amount}"
        return f"{self.course}'s {amount} (all its students together)"

    def words(self) -> str:
        return f"GPU time left: {self.left:.0f} of {self.of_whom} for {PERIOD_WORDS[self.period]}"


def is_gpu(queue: str) -> bool:
    return queue.startswith("gpu.")


def gpu_seconds(period: str = BudgetPeriod.DAY, *, user=None, owners=None) -> float:
    """GPU-seconds runs held a slice over the period: one learner's (`user`), or those of `owners` (a query of user
    ids: a course's students)."""
    since = timezone.now() - PERIODS[BudgetPeriod(period)]
    runs = Submission.objects.filter(queue__startswith="gpu.", finished_at__gte=since, started_at__isnull=False)
    runs = runs.filter(owner=user) if user is not None else runs.filter(owner__in=owners)
    held = runs.aggregate(total=Sum(F("finished_at") - F("started_at")))["total"]
    return held.total_seconds() if held else 0.0


def course_limit(course: Course) -> int | None:
    """What all of a course's students may spend a period: the instructors' figure under the admins' ceiling."""
    caps = [c for c in (course.gpu_seconds_for_course, course.gpu_seconds_ceiling) if c is not None]
    return min(caps) if caps else None


def _students(course: Course):
    return Membership.objects.filter(course=course, role=Role.STUDENT).values("user")


def budgets_for(user) -> list[Budget]:
    """Every cap on `user`'s GPU runs, with what has been spent against it."""
    found = []
    if (site := float(settings.WARPLAB_GPU_SECONDS_PER_DAY)) > 0:
        found.append(Budget(True, "", BudgetPeriod.DAY, site, gpu_seconds(user=user)))
    site_course = float(settings.WARPLAB_COURSE_GPU_SECONDS_PER_DAY)
    for m in Membership.objects.filter(user=user, role=Role.STUDENT).select_related("course"):
        course, period = m.course, m.course.gpu_period
        if course.gpu_seconds_per_student is not None:
            used = gpu_seconds(period, user=user)
            found.append(Budget(True, course.title, period, course.gpu_seconds_per_student, used, course.pk))
        if (limit := course_limit(course)) is not None:
            used = gpu_seconds(period, owners=_students(course))
            found.append(Budget(False, course.title, period, limit, used, course.pk))
        if site_course > 0:
            used = gpu_seconds(owners=_students(course))
            found.append(Budget(False, course.title, BudgetPeriod.DAY, site_course, used, course.pk))
    return found


def check(user, queue: str) -> None:
    """Refuse a GPU run while any cap on the learner is spent; the CPU tier is never refused."""
    if not is_gpu(queue):
        return
    for budget in budgets_for(user):
        if budget.left <= 0:
            raise OverGpuBudget(
                f"No GPU time left: {budget.used:.0f} of {budget.of_whom} for {PERIOD_WORDS[budget.period]} are "
                f"spent. It comes back as older runs pass out of that window. {FREE}"
            )


def tightest(user) -> Budget | None:
    """The cap with the least left, the one a learner runs into first."""
    return min(budgets_for(user), key=lambda b: b.left, default=None)


def left_words(user, run_seconds: float | None = None) -> str:
    """What is left of the tightest cap, in a sentence, with about how many runs of `run_seconds` that is; ''
    when nothing caps the learner."""
    budget = tightest(user)
    if budget is None:
        return ""
    runs = ""
    if run_seconds and run_seconds > 0:
        runs = f", about {int(budget.left // run_seconds)} more runs at about {run_seconds:.0f} s a run"
    return f"{budget.words()}{runs}. {FREE}"


@dataclass(frozen=True)
class CourseSpend:
    course: Course
    students: int
    day: float
    week: float
    per_student: int | None
    limit: int | None
    ceiling: int | None


def spend_of(course: Course) -> CourseSpend:
    """A course's GPU-seconds over the last day and week, beside its caps."""
    students = _students(course)
    return CourseSpend(
        course=course,
        students=students.count(),
        day=gpu_seconds(BudgetPeriod.DAY, owners=students),
        week=gpu_seconds(BudgetPeriod.WEEK, owners=students),
        per_student=course.gpu_seconds_per_student,
        limit=course_limit(course),
        ceiling=course.gpu_seconds_ceiling,
    )


def course_spend() -> list[CourseSpend]:
    """Every course's spend (the fleet dashboard's table)."""
    return [spend_of(course) for course in Course.objects.order_by("title")]
