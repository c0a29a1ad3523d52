"""Alice's scheduling policy becomes a job whose harness carries the exercise's `policy` settings, as stored."""

from __future__ import annotations

import pytest

from gpu_worker.engine import run_job
from labs.runs.services import build_job
from tests.labs.factories import make_run

pytestmark = pytest.mark.django_db

SJF = "def choose(queue, free_gpus, now):\n    return [j.id for j in sorted(queue, key=lambda j: j.duration)]\n"


def test_the_stored_policy_exercise_makes_a_job_the_worker_judges(alice, labs_loaded):
    submission = make_run(alice, SJF, exercise="head-of-line", language="policy", queue="sim", verdict="")
    job = build_job(submission)
    assert job.exercise.language == "policy"
    assert job.exercise.harness.policy is not None and job.exercise.harness.policy.gpus == 32
    assert run_job(job, lambda event: None, backend="sim").verdict == "accepted"
