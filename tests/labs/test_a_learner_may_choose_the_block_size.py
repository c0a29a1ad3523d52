"""Where a lab offers block sizes, the learner's choice becomes the job's launch; any other is refused at the API."""

import json

import pytest

from labs import services
from labs.models import Submission
from tests.labs.factories import client_for

pytestmark = pytest.mark.django_db


def _submit(user, **body):
    payload = {"exercise": "vector-add", "language": "numba", "source": "print('hi')", **body}
    return client_for(user).post("/api/submissions", json.dumps(payload), content_type="application/json")


def test_alice_s_block_size_of_128_is_the_launch_her_job_carries(alice, labs_loaded):
    response = _submit(alice, block_size=128)
    assert response.status_code == 201, response.content
    run = Submission.objects.get(pk=response.json()["id"])
    assert run.launch == {"block": ["128"], "grid": ["ceil_div(n, 128)"], "dynamic_shared_bytes": "0"}
    assert services.build_job(run).launch.grid == ["ceil_div(n, 128)"]


def test_without_a_choice_the_lab_s_own_launch_runs(alice, labs_loaded):
    run = Submission.objects.get(pk=_submit(alice).json()["id"])
    assert run.launch is None and services.build_job(run).launch is None


def test_a_block_size_the_lab_does_not_offer_is_refused_and_nothing_is_saved(alice, labs_loaded):
    response = _submit(alice, block_size=100)
    assert response.status_code == 400 and "32, 64, 128, 256, 512, 1024" in response.json()["error"]
    assert _submit(alice, block_size="128").status_code == 400
    assert _submit(alice, block_size=4096).status_code == 400
    assert _submit(alice, exercise="coalescing", block_size=128).json()["error"].endswith("leave out 'block_size'.")
    assert not Submission.objects.exists()
