"""Factories for courses: ian's course with tess the TA and alice and bob enrolled, an assignment, graded runs."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from gpu_worker.backends import SIM_DEVICE
from gpu_worker.protocol import Result
from labs.courses import services
from labs.courses.services import ItemSpec
from labs.models import Assignment, Course, Submission
from tests.labs.factories import make_run, make_student

FULL = "gpu.h200.full"
CPU_TIER = "sim"


@pytest.fixture
def fast_passwords(settings):
    """Course tests make many personas: a fast hasher keeps them under a second (no password is checked here)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def make_course(instructor: User, title: str = "GPU Programming", students: tuple[User, ...] = ()) -> Course:
    course = services.create_course(instructor, title)
    for student in students:
        services.join_course(student, course.join_code)
    return course


def make_ta(course: Course, instructor: User, username: str = "tess") -> User:
    ta = make_student(username)
    services.add_staff(course, instructor, username)
    return ta


def make_assignment(
    course: Course,
    instructor: User,
    *,
    released: timedelta = timedelta(days=7),
    due_in: timedelta = timedelta(days=7),
    close_after_due: timedelta = timedelta(days=3),
    exercises: tuple[str, ...] = ("vector-add",),
    **options,
) -> Assignment:
    now = timezone.now()
    due = now + due_in
    return services.create_assignment(
        course,
        instructor,
        title=options.pop("title", "Memory bound"),
        release_at=now - released,
        due_at=due,
        close_at=due + close_after_due,
        items=[ItemSpec(slug, 10.0, options.pop("goal", 0.8)) for slug in exercises],
        late_credit=options.pop("late_credit", [0.8, 0.5]),
        **options,
    )


def measured(
    seconds: float = 1e-4,
    roof_pct: float = 60.0,
    *,
    verdict: str = "accepted",
    backend: str = "cuda",
    device: str = "NVIDIA H200",
    above_roof: bool = False,
    shared_gpu: bool = False,
    executed_by: str | None = None,
) -> dict:
    """A stored result document with its largest size timed in `seconds` at `roof_pct` of the copy bandwidth."""
    size = {
        "index": 0,
        "sizes": {"n": 16777213},
        "bytes": 2e8,
        "flops": 1.6e7,
        "intensity": 1 / 12,
        "median_seconds": seconds,
        "flop_rate": 1.6e7 / seconds,
        "bandwidth_pct": roof_pct,
        "flop_pct": roof_pct / 30,
        "above_roof": above_roof,
        "shared_gpu": shared_gpu,
    }
    metrics = {"sizes": [size]} if backend == "cuda" else None
    facts = {"metrics": metrics, "executed_by": executed_by}
    return Result(submission_id=0, verdict=verdict, backend=backend, device=device, **facts).to_wire()


def on_the_cpu_tier(verdict: str = "accepted", executed_by: str | None = "ptx_executor") -> dict:
    """A CPU-tier result: its kernel run by the PTX executor, a fallback (`numba_simulator`) or, None, unsaid."""
    return measured(verdict=verdict, backend="sim", device=SIM_DEVICE, executed_by=executed_by)


def run_at(
    owner: User,
    at: datetime,
    result: dict | None = None,
    *,
    exercise: str = "vector-add",
    queue: str = FULL,
    source: str = "// kernel",
    language: str = "cuda",
) -> Submission:
    """A finished run submitted at `at` with a stored result (by default a graded one)."""
    result = measured() if result is None else result
    submission = make_run(
        owner, source, result, exercise=exercise, language=language, queue=queue, verdict=result["verdict"]
    )
    Submission.objects.filter(pk=submission.pk).update(created_at=at)
    submission.refresh_from_db()
    return submission
