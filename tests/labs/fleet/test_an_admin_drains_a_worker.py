"""An admin drains a worker from the fleet page: its job in flight finishes, nothing new starts there, and its
heartbeat says "draining" until the admin undrains it (issue 30, item 10). A real sim worker, web worker, Redis
and Celery's own remote control (cancel_consumer / add_consumer); an instructor may look but not drain.

Its own module, so that no other test's worker can take the jobs.
"""

import os
import time

import pytest
from django.db import connection

from gpu_worker.exercise.labspec import find_lab
from labs.fleet import heartbeats
from labs.runs import services
from tests import processes
from tests.labs.factories import client_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

CASES = {case.name: case for case in find_lab("vector-add").cases}
# Still running in the simulator a few seconds after it starts: every simulated thread waits at 30 barriers.
SLOW_BUT_CORRECT = CASES["reference-numba"].source.replace(
    "    i = cuda.grid(1)\n", "    i = cuda.grid(1)\n    for _ in range(30):\n        cuda.syncthreads()\n"
)
QUICK = CASES["reference-numba"].source
WORKER = f"sim-drain-{os.getpid()}@test"  # a name of this run alone: the drain is sent to it by name


def _state() -> str | None:
    beat = next((b for b in heartbeats.workers() if b["name"] == WORKER), None)
    return beat and beat["state"]


def _wait_for(check, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


@pytest.fixture
def fleet(labs_loaded, django_db_setup):
    processes.purge_queues("sim", "web")
    web = processes.start_web_worker(processes.database_url(connection.settings_dict))
    sim = processes.start_sim_worker("worker-sim-drain", WARPLAB_WORKER_NAME=WORKER, WARPLAB_HEARTBEAT_SECONDS="1")
    yield
    sim.stop()
    web.stop()


def test_a_drained_worker_finishes_its_job_starts_nothing_new_and_takes_jobs_again_when_undrained(
    fleet, alice, bob, ada, ian
):
    _wait_for(lambda: _state() == "serving", "the worker never said serving")
    first = services.submit_run(alice, "vector-add", "numba", SLOW_BUT_CORRECT)
    _wait_for(lambda: first.refresh_from_db() or first.status == "running", "the first run never started")

    assert client_for(ian).post("/fleet/", {"action": "drain", "worker": WORKER}).status_code == 403
    admin = client_for(ada)
    answer = admin.post("/fleet/", {"action": "drain", "worker": WORKER}, follow=True)
    said = answer.content.decode()
    assert f"{WORKER} answered “no longer consuming from" in said and "takes nothing new" in said
    _wait_for(lambda: _state() == "draining", "the heartbeat never said draining")

    second = services.submit_run(bob, "vector-add", "numba", QUICK)
    assert "being drained by an admin" in second.events.get(seq=1).payload["message"]
    first = processes.wait_until_finished(first)
    assert first.verdict == "accepted"  # the job in flight finished
    time.sleep(3)  # three beats with nothing new started
    second.refresh_from_db()
    assert second.status == "queued" and _state() == "draining"
    page = admin.get("/fleet/").content.decode()
    assert "· draining" in page and 'value="undrain"' in page

    admin.post("/fleet/", {"action": "undrain", "worker": WORKER})
    assert processes.wait_until_finished(second).verdict == "accepted"
    # the heartbeat tells the state it read at its last beat (every second here): a quick job can end before it
    _wait_for(lambda: _state() == "serving", "the heartbeat never said serving again", timeout=10)


def test_draining_a_worker_that_is_not_beating_says_so(ada, labs_loaded):
    page = client_for(ada).post("/fleet/", {"action": "drain", "worker": "nobody@nowhere"}, follow=True)
    assert "nobody@nowhere was not drained: No live worker is called" in page.content.decode()
