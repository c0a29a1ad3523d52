"""What there is to learn: the six modules and the exercises loaded from lab folders."""

from __future__ import annotations

from django.db import models


class Module(models.Model):
    """One of the six modules of the course, in order."""

    number = models.PositiveSmallIntegerField(unique=True)
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    lesson = models.TextField(blank=True, help_text="Markdown from lesson.md, with {{figure:name}} lines")

    class Meta:
        ordering = ["number"]

    def __str__(self) -> str:
        return f"{self.number}. {self.title}"


class ExerciseQuerySet(models.QuerySet):
    def visible_to(self, user) -> ExerciseQuerySet:
        """Published exercises of the public catalogue, and those published into a course `user` is in.

        An admin (superuser) sees every published exercise; a visitor only the public catalogue.
        """
        published = self.filter(published=True)
        if getattr(user, "is_superuser", False):
            return published
        if user is None or not user.is_authenticated:
            return published.filter(course__isnull=True)
        return published.filter(models.Q(course__isnull=True) | models.Q(course__memberships__user=user)).distinct()

    def for_course(self, course) -> ExerciseQuerySet:
        """What an assignment of `course` may set: the public catalogue and the course's own exercises."""
        return self.filter(published=True).filter(models.Q(course__isnull=True) | models.Q(course=course))


class Exercise(models.Model):
    """An exercise as loaded by `sync_labs` from `labs/content/<module>/<slug>/`, or authored in the browser.

    The folder is the source of truth for the harness and the files; instructors
    may edit the metadata here (title, order, pool, whether it is published). An exercise with a `course` was
    published into that course by its author (`labs.curriculum.authoring`) and only its members see it; one
    without is in the public catalogue.
    """

    uuid = models.UUIDField(unique=True)
    slug = models.SlugField(unique=True)
    module = models.ForeignKey(Module, on_delete=models.PROTECT, related_name="exercises")
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    order = models.IntegerField(default=0)
    version = models.PositiveIntegerField(default=1)
    languages = models.JSONField(default=list)
    entry = models.CharField(max_length=100)
    statement = models.TextField(help_text="Markdown, from README.md")
    statement_html = models.TextField(editable=False, help_text="Sanitised HTML rendered from the statement")
    starters = models.JSONField(default=dict)
    references = models.JSONField(default=dict, help_text="Reference solution per language, from reference.*")
    harness = models.JSONField(default=dict)
    limits = models.JSONField(default=dict)
    pool = models.CharField(max_length=100, blank=True, help_text="Queue this exercise needs; blank: the default")
    folder = models.CharField(max_length=500)
    published = models.BooleanField(default=True)
    course = models.ForeignKey(
        "labs.Course",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="own_exercises",
        help_text="Only this course's members see it; blank: the public catalogue",
    )
    updated_at = models.DateTimeField(auto_now=True)

    objects = ExerciseQuerySet.as_manager()

    class Meta:
        ordering = ["module__number", "order", "slug"]

    def __str__(self) -> str:
        return self.title
