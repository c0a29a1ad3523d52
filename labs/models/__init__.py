"""The labs models, one module per aggregate."""

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
from labs.models.lab import Exercise, Module
from labs.models.run import Submission, SubmissionEvent

__all__ = [
    "Assignment",
    "AssignmentExercise",
    "Course",
    "CourseGroup",
    "Exercise",
    "Feedback",
    "Membership",
    "Module",
    "Override",
    "Regrade",
    "RegradeRun",
    "Submission",
    "SubmissionEvent",
]
