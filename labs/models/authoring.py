"""Labs authored in the browser: a draft's files, its validation runs, and what it was published as."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class LabDraft(models.Model):
    """A lab folder held in the database (path -> text) until it is validated and published.

    Validation loads it as `sync_labs` would and runs every sample on `sim` against a hidden draft exercise;
    publishing copies it into the live exercise (`slug`) with the next version. Only written by
    `labs.curriculum.authoring`.
    """

    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="lab_drafts")
    slug = models.SlugField(unique=True)
    module = models.ForeignKey("labs.Module", on_delete=models.PROTECT, related_name="+")
    files = models.JSONField(default=dict, help_text="path inside the lab folder -> text")
    draft_exercise = models.OneToOneField(
        "labs.Exercise", null=True, blank=True, on_delete=models.SET_NULL, related_name="draft_of"
    )
    validation = models.JSONField(default=list, help_text="[{case, language, expected, submission_id}]")
    validated_at = models.DateTimeField(null=True, blank=True)
    published = models.ForeignKey(
        "labs.Exercise", null=True, blank=True, on_delete=models.SET_NULL, related_name="authored_as"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug
