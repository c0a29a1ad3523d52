"""Courses: who is in them, their assignments with dates and overrides, regrades and feedback.

Only `labs.courses.services` writes these; grades are computed from stored runs (`labs.courses.grading`), not stored.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q


def new_join_code() -> str:
    return secrets.token_urlsafe(6).replace("-", "x").replace("_", "y")[:8].upper()


class Role(models.TextChoices):
    STUDENT = "student", "Student"
    TA = "ta", "Teaching assistant"
    INSTRUCTOR = "instructor", "Instructor"


class BoardNames(models.TextChoices):
    PSEUDONYMOUS = "pseudonymous", "Pseudonymous"
    NAMED = "named", "Named"


class BudgetPeriod(models.TextChoices):
    DAY = "day", "a day (the last 24 hours)"
    WEEK = "week", "a week (the last 7 days)"


class Course(models.Model):
    """A course run by its instructors: members, assignments, a join code students enrol with, and the GPU time
    its students may spend (`labs.fleet.budgets`): each student's and all together's, set by its instructors
    under the ceiling an admin sets; runs on the CPU tier are never counted."""

    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    join_code = models.CharField(max_length=16, unique=True, default=new_join_code)
    board_names = models.CharField(max_length=20, choices=BoardNames.choices, default=BoardNames.PSEUDONYMOUS)
    gpu_period = models.CharField(max_length=8, choices=BudgetPeriod.choices, default=BudgetPeriod.DAY)
    gpu_seconds_per_student = models.PositiveIntegerField(null=True, blank=True, help_text="Blank: no cap")
    gpu_seconds_for_course = models.PositiveIntegerField(
        null=True, blank=True, help_text="All its students together; blank: the admins' ceiling, if any"
    )
    gpu_seconds_ceiling = models.PositiveIntegerField(
        null=True, blank=True, help_text="Set by an admin: the most the course may spend a period"
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title


class Membership(models.Model):
    """One person's role in one course; students carry the pseudonym leaderboards show."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=12, choices=Role.choices)
    pseudonym = models.CharField(max_length=40, blank=True)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["role", "user__username"]
        constraints = [models.UniqueConstraint(fields=["course", "user"], name="one_membership_per_course")]


class CourseGroup(models.Model):
    """A set of a course's students that an override can name (a section, a lab group)."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="groups")
    name = models.CharField(max_length=100)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="course_groups", blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["course", "name"], name="one_group_name_per_course")]

    def __str__(self) -> str:
        return self.name


class GradingRule(models.TextChoices):
    ROOF = "roof", "Fraction of the slice's calibrated roof"
    SPEEDUP = "speedup", "Speed-up over the reference"


class GradingBasis(models.TextChoices):
    """What an assignment grades, and so which tiers' runs count (`labs.courses.grading.not_counted_reason`)."""

    CORRECTNESS = "correctness", "Correctness: counts on any tier, the CPU tier included"
    PERFORMANCE = "performance", "Performance: counts on a whole GPU or a MIG slice only"


class Selection(models.TextChoices):
    BEST = "best", "Best on-time submission"
    LAST = "last", "Last submission"


class Assignment(models.Model):
    """Exercises with a release date, a due date, a late-credit curve and a hard close."""

    course = models.ForeignKey(Course, on_delete=models.CASCADE, related_name="assignments")
    slug = models.SlugField()
    title = models.CharField(max_length=200)
    release_at = models.DateTimeField()
    due_at = models.DateTimeField()
    close_at = models.DateTimeField(help_text="Hard close: no run after it counts")
    late_credit = models.JSONField(default=list, help_text="Credit per day late, e.g. [0.9, 0.7]; past it: 0")
    practice_after_close = models.BooleanField(default=True)
    grading_basis = models.CharField(max_length=12, choices=GradingBasis.choices, default=GradingBasis.PERFORMANCE)
    rule = models.CharField(max_length=10, choices=GradingRule.choices, default=GradingRule.ROOF)
    selection = models.CharField(max_length=10, choices=Selection.choices, default=Selection.BEST)
    correctness_weight = models.FloatField(default=0.5, help_text="Share of the points for passing every check")
    exercises = models.ManyToManyField("labs.Exercise", through="AssignmentExercise", related_name="assignments")

    class Meta:
        ordering = ["due_at", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["course", "slug"], name="one_assignment_slug_per_course"),
            models.CheckConstraint(condition=Q(due_at__gte=models.F("release_at")), name="due_after_release"),
            models.CheckConstraint(condition=Q(close_at__gte=models.F("due_at")), name="close_after_due"),
        ]

    def __str__(self) -> str:
        return self.title


class AssignmentExercise(models.Model):
    """One exercise of an assignment, its points and its performance goal under the assignment's rule."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="items")
    exercise = models.ForeignKey("labs.Exercise", on_delete=models.PROTECT, related_name="+")
    order = models.PositiveSmallIntegerField(default=0)
    points = models.FloatField(default=10.0)
    goal = models.FloatField(default=0.8, help_text="Roof rule: fraction of the roof; speed-up rule: the speed-up")

    class Meta:
        ordering = ["order", "id"]
        constraints = [models.UniqueConstraint(fields=["assignment", "exercise"], name="one_item_per_exercise")]


class Override(models.Model):
    """An extension for one student or one group. A student's own override wins over any group's;
    among a student's groups the latest due date wins; without one, the assignment's dates hold."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="overrides")
    student = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    group = models.ForeignKey(CourseGroup, null=True, blank=True, on_delete=models.CASCADE)
    due_at = models.DateTimeField()
    close_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(student__isnull=False, group__isnull=True) | Q(student__isnull=True, group__isnull=False),
                name="override_names_a_student_or_a_group",
            ),
            models.UniqueConstraint(fields=["assignment", "student"], name="one_override_per_student"),
            models.UniqueConstraint(fields=["assignment", "group"], name="one_override_per_group"),
            models.CheckConstraint(condition=Q(close_at__gte=models.F("due_at")), name="override_close_after_due"),
        ]


class Regrade(models.Model):
    """One re-execution of an assignment's chosen submissions, with what it ran on."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="regrades")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]


class RegradeRun(models.Model):
    """A chosen submission, the run that re-executed it, and the score and device before."""

    regrade = models.ForeignKey(Regrade, on_delete=models.CASCADE, related_name="runs")
    original = models.ForeignKey("labs.Submission", on_delete=models.CASCADE, related_name="regraded_as")
    rerun = models.OneToOneField("labs.Submission", on_delete=models.CASCADE, related_name="regrade_of")
    harness_version = models.PositiveIntegerField()
    old_score = models.FloatField(null=True)
    old_device = models.CharField(max_length=200, blank=True)


class Feedback(models.Model):
    """A comment from course staff to one student about one assignment."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="feedback")
    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    submission = models.ForeignKey("labs.Submission", null=True, blank=True, on_delete=models.SET_NULL)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
