"""The labs models, one module per aggregate."""

from labs.models.gpu import Gpu, Node, Pool, Slice, Worker
from labs.models.lab import Exercise, Module
from labs.models.run import Submission, SubmissionEvent

__all__ = ["Exercise", "Gpu", "Module", "Node", "Pool", "Slice", "Submission", "SubmissionEvent", "Worker"]
