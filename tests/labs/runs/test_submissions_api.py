"""The JSON API: a learner submits a run and reads it back; bad input is refused and saves nothing."""

import json

import pytest
from django.test import Client

from labs.models import Submission

pytestmark = pytest.mark.django_db

GOOD = "from numba import cuda\n\n@cuda.jit\ndef vector_add(a, b, c):\n    pass\n"


def post(client: Client, body, raw: bool = False):
    data = body if raw else json.dumps(body)
    return client.post("/api/submissions", data=data, content_type="application/json")


@pytest.fixture
def alice_client(alice, labs_loaded) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def test_it_creates_a_queued_submission(alice_client, alice):
    response = post(alice_client, {"exercise": "vector-add", "language": "numba", "source": GOOD})
    assert response.status_code == 201
    body = response.json()
    submission = Submission.objects.get(public_id=body["id"])
    assert body["number"] == submission.pk and body["url"] == f"/api/submissions/{submission.public_id}"
    assert submission.owner == alice and submission.status == "queued" and submission.queue == "sim"
    assert body["ws_url"] == f"/ws/submissions/{submission.public_id}/"
    assert [e.type for e in submission.events.all()] == ["queued"]


def test_the_owner_reads_it_back_with_its_events(alice_client):
    created = post(alice_client, {"exercise": "vector-add", "language": "cuda", "source": "int x;"}).json()
    body = alice_client.get(f"/api/submissions/{created['id']}").json()
    assert body["language"] == "cuda" and body["source"] == "int x;"
    assert body["events"][0]["type"] == "queued" and body["events"][0]["seq"] == 1


def test_it_lists_only_my_submissions_for_an_exercise(alice_client, bob, labs_loaded):
    post(alice_client, {"exercise": "vector-add", "language": "numba", "source": GOOD})
    bob_client = Client()
    bob_client.force_login(bob)
    post(bob_client, {"exercise": "vector-add", "language": "numba", "source": GOOD})
    listed = alice_client.get("/api/submissions?exercise=vector-add").json()["submissions"]
    assert len(listed) == 1 and listed[0]["exercise"] == "vector-add"


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"exercise": "vector-add", "language": "numba", "source": "   "}, 400, "empty"),
        ({"exercise": "vector-add", "language": "numba", "source": "x" * (64 * 1024 + 1)}, 413, "64 KiB"),
        ({"exercise": "no-such-thing", "language": "numba", "source": GOOD}, 404, "no exercise"),
        ({"exercise": "vector-add", "language": "fortran", "source": GOOD}, 400, "Language must be"),
        ({"exercise": "vector-add", "language": "numba"}, 400, "empty"),
        ({"language": "numba", "source": GOOD}, 400, "which exercise"),
        ([1, 2, 3], 400, "JSON object"),
    ],
)
def test_it_rejects_bad_input_with_a_clear_message_and_saves_nothing(alice_client, body, status, words):
    response = post(alice_client, body)
    assert response.status_code == status
    assert words.lower() in response.json()["error"].lower()
    assert Submission.objects.count() == 0


def test_it_rejects_malformed_json(alice_client):
    response = post(alice_client, "{not json", raw=True)
    assert response.status_code == 400 and "not valid JSON" in response.json()["error"]
    assert Submission.objects.count() == 0


def test_it_needs_a_login(labs_loaded):
    response = post(Client(), {"exercise": "vector-add", "language": "numba", "source": GOOD})
    assert response.status_code == 401 and Submission.objects.count() == 0


def test_it_refuses_a_post_without_the_csrf_token(alice, labs_loaded):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = post(client, {"exercise": "vector-add", "language": "numba", "source": GOOD})
    assert response.status_code == 403 and Submission.objects.count() == 0


def test_it_limits_the_runs_per_minute(alice_client, settings):
    settings.WARPLAB_RUNS_PER_MINUTE, settings.WARPLAB_RUNS_IN_FLIGHT = 2, 0
    codes = [
        post(alice_client, {"exercise": "vector-add", "language": "numba", "source": GOOD}).status_code
        for _ in range(3)
    ]
    assert codes == [201, 201, 429]
