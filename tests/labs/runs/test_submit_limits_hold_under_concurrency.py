"""The abuse limits are exact when many posts race: the rate, one run in flight, and the lab's queue cap.

Each post is a real request through Django on its own thread and database connection; the
counters live in the real Redis.
"""

import json
from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest
from django.db import connection

from labs.models import Submission
from labs.models.run import Status
from tests.labs.factories import client_for, make_student

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

BODY = json.dumps({"exercise": "vector-add", "language": "numba", "source": "x = 1\n"})


def race(user, posts: int) -> list[int]:
    """`posts` concurrent submits by `user`, released at once: their status codes."""
    start = Barrier(posts)

    def one(_: int) -> int:
        client = client_for(user)
        try:
            start.wait()
            return client.post("/api/submissions", data=BODY, content_type="application/json").status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=posts) as pool:
        return list(pool.map(one, range(posts)))


def test_fifty_concurrent_posts_against_a_rate_of_twenty_let_exactly_twenty_through(alice, labs_loaded, settings):
    settings.WARPLAB_RUNS_PER_MINUTE, settings.WARPLAB_RUNS_IN_FLIGHT = 20, 0
    codes = race(alice, 50)
    assert codes.count(201) == 20 and codes.count(429) == 30, codes
    assert Submission.objects.filter(owner=alice).count() == 20


def test_twenty_concurrent_posts_leave_exactly_one_run_in_flight(alice, labs_loaded, settings):
    settings.WARPLAB_RUNS_PER_MINUTE, settings.WARPLAB_RUNS_IN_FLIGHT = 100, 1
    codes = race(alice, 20)
    assert codes.count(201) == 1 and codes.count(429) == 19, codes
    assert Submission.objects.filter(owner=alice).count() == 1


def test_a_finished_run_frees_the_slot(alice, labs_loaded):
    client = client_for(alice)
    assert client.post("/api/submissions", data=BODY, content_type="application/json").status_code == 201
    refused = client.post("/api/submissions", data=BODY, content_type="application/json")
    assert refused.status_code == 429 and "still queued or running" in refused.json()["error"]
    Submission.objects.filter(owner=alice).update(status=Status.DONE)
    assert client.post("/api/submissions", data=BODY, content_type="application/json").status_code == 201


def test_a_full_queue_is_answered_503_with_a_message(alice, bob, labs_loaded, settings):
    settings.WARPLAB_QUEUE_CAP = 1
    assert client_for(bob).post("/api/submissions", data=BODY, content_type="application/json").status_code == 201
    response = client_for(alice).post("/api/submissions", data=BODY, content_type="application/json")
    assert response.status_code == 503 and "1 runs are waiting" in response.json()["error"]


def test_one_learner_at_the_limit_does_not_hold_back_another(alice, labs_loaded, settings):
    settings.WARPLAB_RUNS_PER_MINUTE, settings.WARPLAB_RUNS_IN_FLIGHT = 1, 0
    assert race(alice, 3).count(201) == 1
    assert (
        client_for(make_student("carol"))
        .post("/api/submissions", data=BODY, content_type="application/json")
        .status_code
        == 201
    )
