"""The labs models, one module per aggregate."""

from labs.models.lab import Exercise, Module
from labs.models.run import Submission, SubmissionEvent

__all__ = ["Exercise", "Module", "Submission", "SubmissionEvent"]
