"""Factories for the personas and their runs: alice the student, ian the instructor, ada the admin."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client

from gpu_worker.protocol import Result
from labs import accounts
from labs.models import Exercise, Submission
from labs.models.run import Status

PASSWORD = "correct-horse-battery"


def make_student(username: str = "alice") -> User:
    user = User.objects.create_user(username, password=PASSWORD)
    user.groups.add(accounts.ensure_roles()[accounts.STUDENTS])
    return user


def make_instructor(username: str = "ian") -> User:
    user = User.objects.create_user(username, password=PASSWORD, is_staff=True)
    user.groups.add(accounts.ensure_roles()[accounts.INSTRUCTORS])
    return user


def make_admin(username: str = "ada") -> User:
    return User.objects.create_superuser(username, password=PASSWORD)


def client_for(user: User) -> Client:
    """A test client logged in as `user`."""
    client = Client()
    client.force_login(user)
    return client


def timed_result(device: str = "NVIDIA H200", flop_rate: float | None = 300e9, above_roof: bool = False) -> dict:
    """A stored cuda result of vector-add at two sizes; the largest measured at `flop_rate` (None: neither timed)."""
    smaller_rate = None if flop_rate is None else 100e9
    sizes = [
        {"index": 0, "sizes": {"n": 1000003}, "intensity": 1 / 12, "flop_rate": smaller_rate, "above_roof": False},
        {"index": 1, "sizes": {"n": 16777213}, "intensity": 1 / 12, "flop_rate": flop_rate, "above_roof": above_roof},
    ]
    return Result(
        submission_id=0, verdict="accepted", backend="cuda", device=device, metrics={"sizes": sizes}
    ).to_wire()


def make_run(
    owner: User,
    source: str = "// a kernel",
    result: dict | None = None,
    *,
    exercise: str = "vector-add",
    language: str = "cuda",
    queue: str = "gpu.h200.full",
    verdict: str = "accepted",
) -> Submission:
    """A finished run with its stored result (by default a timed one)."""
    return Submission.objects.create(
        owner=owner,
        exercise=Exercise.objects.get(slug=exercise),
        language=language,
        source=source,
        queue=queue,
        status=Status.DONE,
        verdict=verdict,
        result=timed_result() if result is None else result,
    )
