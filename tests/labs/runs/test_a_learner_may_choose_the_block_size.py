"""Where a lab offers block sizes, the learner's choice becomes the job's launch; any other is refused at the API."""

import json

import pytest

from labs.models import Submission
from labs.runs import services
from tests.labs.factories import client_for

pytestmark = pytest.mark.django_db


def _submit(user, **body):
    payload = {"exercise": "vector-add", "language": "numba", "source": "print('hi')", **body}
    return client_for(user).post("/api/submissions", json.dumps(payload), content_type="application/json")


def test_alice_s_block_size_of_128_is_the_launch_her_job_carries(alice, labs_loaded):
    response = _submit(alice, block_size=128)
    assert response.status_code == 201, response.content
    run = Submission.objects.get(public_id=response.json()["id"])
    launch = {"block": ["128"], "grid": ["ceil_div(n, 128)"], "dynamic_shared_bytes": "0", "sweep_blocks": []}
    assert run.launch == launch
    assert services.build_job(run).launch.grid == ["ceil_div(n, 128)"]


def test_without_a_choice_the_lab_s_own_launch_runs(alice, labs_loaded):
    run = Submission.objects.get(public_id=_submit(alice).json()["id"])
    assert run.launch is None and services.build_job(run).launch is None


def test_a_block_size_the_lab_does_not_offer_is_refused_and_nothing_is_saved(alice, labs_loaded):
    response = _submit(alice, block_size=100)
    assert response.status_code == 400 and "32, 64, 128, 256, 512, 1024" in response.json()["error"]
    assert _submit(alice, block_size="128").status_code == 400
    assert _submit(alice, block_size=4096).status_code == 400
    refused = _submit(alice, exercise="coalescing", block_size=128).json()["error"]
    assert refused.endswith("leave out 'block_size' and 'sweep'.")
    assert not Submission.objects.exists()


def test_a_sweep_asks_for_every_other_block_size_offered_beside_the_learner_s_own(alice, labs_loaded):
    run = Submission.objects.get(public_id=_submit(alice, block_size=128, sweep=True).json()["id"])
    assert run.launch["block"] == ["128"] and run.launch["sweep_blocks"] == [32, 64, 256, 512, 1024]
    assert services.build_job(run).launch.sweep_blocks == [32, 64, 256, 512, 1024]


def test_a_sweep_without_a_block_size_puts_the_lab_s_own_block_on_the_curve(alice, labs_loaded):
    run = Submission.objects.get(public_id=_submit(alice, sweep=True).json()["id"])
    assert run.launch["block"] == ["256"] and 256 not in run.launch["sweep_blocks"]
    assert len(run.launch["sweep_blocks"]) == 5


def test_a_sweep_is_refused_where_the_launch_is_fixed_or_the_flag_is_not_a_boolean(alice, labs_loaded):
    assert _submit(alice, exercise="coalescing", sweep=True).status_code == 400
    assert _submit(alice, sweep="yes").json()["error"] == "'sweep' must be true or false."
    assert not Submission.objects.exists()


def test_where_the_lab_runs_on_the_cpu_tier_the_sweep_is_off_and_says_why(alice, labs_loaded):
    page = client_for(alice).get("/exercises/vector-add/").content.decode()
    assert 'id="sweep-blocks" disabled' in page
    assert "this lab's runs go to the CPU tier now, where nothing is timed" in page


def test_where_the_lab_runs_on_a_gpu_the_sweep_is_offered(alice, labs_loaded):
    from labs.models import Exercise

    Exercise.objects.filter(slug="vector-add").update(pool="gpu.h100.full")
    page = client_for(alice).get("/exercises/vector-add/").content.decode()
    assert '<input type="checkbox" id="sweep-blocks"> Sweep every block size' in page
    assert "where nothing is timed" not in page
