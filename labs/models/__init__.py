"""The labs models, one module per aggregate."""

from labs.models.authoring import LabDraft
from labs.models.course import (
    Assignment,
    AssignmentExercise,
    Course,
    CourseGroup,
    Feedback,
    Membership,
    Override,
    Regrade,
    RegradeRun,
)
from labs.models.gpu import Gpu, Node, Pool, Slice, Worker
from labs.models.lab import Exercise, Module
from labs.models.lti import LtiContext, LtiPlatform, LtiResourceLink, LtiToolKey, LtiUser
from labs.models.run import SourceDraft, Submission, SubmissionEvent

__all__ = [
    "Assignment",
    "AssignmentExercise",
    "Course",
    "CourseGroup",
    "Exercise",
    "Feedback",
    "Gpu",
    "LabDraft",
    "LtiContext",
    "LtiPlatform",
    "LtiResourceLink",
    "LtiToolKey",
    "LtiUser",
    "Membership",
    "Module",
    "Node",
    "Override",
    "Pool",
    "Regrade",
    "RegradeRun",
    "Slice",
    "SourceDraft",
    "Submission",
    "SubmissionEvent",
    "Worker",
]
