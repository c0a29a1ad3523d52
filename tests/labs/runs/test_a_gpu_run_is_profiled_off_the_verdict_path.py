"""Nsight Compute runs after the verdict, on the profile lane: a learner's first accepted GPU run, or on request.

Real Redis: the profile job is read back from the broker's `<queue>.profile` list, where the profile-lane
worker (`python -m gpu_worker serve --lane profile`) would take it.
"""

from __future__ import annotations

import uuid

import pytest
import redis
from django.conf import settings

from labs.runs import services
from tests.broker import queued_tasks
from tests.labs.factories import make_run, make_student

pytestmark = [pytest.mark.django_db, pytest.mark.integration]
ACCEPTED_ON_GPU = {
    "submission_id": 0,
    "verdict": "accepted",
    "backend": "cuda",
    "device": "NVIDIA H200",
    "message": "all 3 checks passed",
}


@pytest.fixture
def queue() -> str:
    name = f"gpu.t{uuid.uuid4().hex[:8]}.full"
    yield name
    with redis.Redis.from_url(settings.CELERY_BROKER_URL) as client:
        client.delete(_key(name))


def _key(queue: str) -> str:
    return f"{settings.CELERY_BROKER_TRANSPORT_OPTIONS['global_keyprefix']}{queue}.profile"


def _profile_jobs(queue: str) -> list[dict]:
    return [{"task": task, "job": args[0]} for task, args in queued_tasks(settings.CELERY_BROKER_URL, _key(queue))]


def _finish(run, result: dict, capture) -> None:
    run.verdict, run.status = "", "running"
    run.save()
    with capture(execute=True):
        services.record_result(run.pk, {**result, "submission_id": run.pk})
    run.refresh_from_db()


def test_a_learner_s_first_accepted_gpu_run_is_profiled_on_its_lane_and_the_next_is_not(
    labs_loaded, queue, django_capture_on_commit_callbacks
):
    alice = make_student("alice")
    first = make_run(alice, queue=queue, result={})
    _finish(first, ACCEPTED_ON_GPU, django_capture_on_commit_callbacks)
    assert first.verdict == "accepted"
    assert first.result["profile"] == {"state": "queued"}
    jobs = _profile_jobs(queue)
    assert [(j["task"], j["job"]["submission_id"]) for j in jobs] == [("gpu_worker.profile_run", first.pk)]
    second = make_run(alice, queue=queue, result={})
    _finish(second, ACCEPTED_ON_GPU, django_capture_on_commit_callbacks)
    assert second.result.get("profile") is None
    assert len(_profile_jobs(queue)) == 1


def test_a_learner_may_ask_for_the_report_of_their_accepted_run_and_no_one_else_may(
    client, labs_loaded, queue, django_capture_on_commit_callbacks
):
    alice, bob = make_student("alice"), make_student("bob")
    make_run(alice, queue=queue, result={**ACCEPTED_ON_GPU, "profile": {"available": True}})  # profiled earlier
    run = make_run(alice, queue=queue, result=dict(ACCEPTED_ON_GPU))
    client.force_login(bob)
    assert client.post(f"/api/submissions/{run.public_id}/profile").status_code == 404
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        asked = client.post(f"/api/submissions/{run.public_id}/profile")
    assert asked.status_code == 202 and asked.json()["profile"] == {"state": "queued"}
    again = client.post(f"/api/submissions/{run.public_id}/profile")
    assert again.status_code == 200 and again.json()["profile"] == {"state": "queued"}
    assert len(_profile_jobs(queue)) == 1
    services.record_profile(run.pk, {"available": True, "achieved_occupancy": 0.9})
    run.refresh_from_db()
    assert run.result["profile"]["achieved_occupancy"] == 0.9


def test_a_run_on_the_simulator_cannot_be_profiled(client, labs_loaded):
    alice = make_student("alice")
    run = make_run(alice, queue="sim", result={**ACCEPTED_ON_GPU, "backend": "sim"}, language="numba")
    client.force_login(alice)
    refused = client.post(f"/api/submissions/{run.public_id}/profile")
    assert refused.status_code == 409 and "GPU" in refused.json()["error"]
