"""A learner's run: the submission, its streamed events and its result document; and the draft before it."""

import uuid

from django.conf import settings
from django.db import models

from gpu_worker.protocol import VERDICT_LABELS, VERDICTS


class Language(models.TextChoices):
    NUMBA = "numba", "CUDA Python (Numba)"
    CUDA = "cuda", "CUDA C++"
    TRITON = "triton", "Triton"
    POLICY = "policy", "Scheduling policy (Python)"
    FUNCTION = "function", "Python function (judged by its answers)"


class Status(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    ERROR = "error", "Error"


# The verdicts are the contract's (`gpu_worker.protocol.VERDICTS`, one label each): written there once, so a
# verdict a worker may send is one the database, the admin and the pages know, by the same words.
Verdict = models.TextChoices("Verdict", [(v.upper(), (v, VERDICT_LABELS[v])) for v in VERDICTS])


class Submission(models.Model):
    """One run of a learner's source. Its `pk` numbers it on staff pages; URLs name it by `public_id`, random,
    so nobody reaches another's run by counting."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions")
    exercise = models.ForeignKey("labs.Exercise", on_delete=models.PROTECT, related_name="submissions")
    language = models.CharField(max_length=10, choices=Language.choices)
    source = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    verdict = models.CharField(max_length=20, choices=Verdict.choices, blank=True)
    queue = models.CharField(max_length=100)
    exercise_version = models.PositiveIntegerField(null=True, blank=True, help_text="The lab version it ran against")
    result = models.JSONField(null=True, blank=True)
    launch = models.JSONField(
        null=True, blank=True
    )  # the learner's chosen launch (protocol.LaunchSpec); null: the lab's
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    last_event_at = models.DateTimeField(null=True, blank=True)
    # The job ledger (labs.runs.ledger): the broker may lose or redeliver a job; these say what the database knows.
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Deliveries granted a claim to run this job")
    claimed_task = models.CharField(max_length=64, blank=True, help_text="The Celery task id of the claimed delivery")
    lease_until = models.DateTimeField(null=True, blank=True, help_text="The claimed attempt is presumed lost after")
    dispatched_at = models.DateTimeField(null=True, blank=True, help_text="When its job was last handed to the broker")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "exercise", "-created_at"]), models.Index(fields=["status"])]
        permissions = [("view_all_submissions", "Can read every learner's submissions")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.exercise_id} by {self.owner_id}"

    @property
    def group_name(self) -> str:
        """The channel-layer group its events are sent to."""
        return f"submission.{self.pk}"

    @property
    def finished(self) -> bool:
        return self.status in (Status.DONE, Status.ERROR)


class SubmissionEvent(models.Model):
    """One streamed event, kept so a late or reconnecting viewer misses nothing."""

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=30)
    payload = models.JSONField()

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["submission", "seq"], name="one_event_per_seq")]


class SourceDraft(models.Model):
    """What a learner last typed for one exercise in one language, not yet (or not only) submitted: kept on the
    server, so the editor opens on it in any browser (`labs.runs.drafts`)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="source_drafts")
    exercise = models.ForeignKey("labs.Exercise", on_delete=models.CASCADE, related_name="source_drafts")
    language = models.CharField(max_length=10, choices=Language.choices)
    source = models.TextField(blank=True)
    saved_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner", "exercise", "language"], name="one_draft_per_exercise_language")
        ]

    def __str__(self) -> str:
        return f"draft of {self.exercise_id} in {self.language} by {self.owner_id}"
