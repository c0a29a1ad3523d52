"""A job starts while the ledger answers its claim; a delivery the ledger refuses reports nothing.

The worker used to wait for the claim's round trip through the web queue before it started a job (0.12 s p50,
0.54 s p95 under 8 learners, run 30). A first delivery now starts at once, its events held until the grant
(`gpu_worker.worker.claim`). Here, on the real broker, web worker and sim worker: a run granted beside its
job is reported whole, and a second send of the same finished run's job (a duplicate send, which the ledger
exists to make harmless) is run beside a claim that is refused, and leaves the run as it was. Its own module,
so that no other test's worker takes the jobs.
"""

import time

import pytest
from django.db import connection

from gpu_worker.exercise.labspec import find_lab
from labs.runs import ledger, services
from tests import processes

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

REFERENCE = {case.name: case for case in find_lab("vector-add").cases}["reference-numba"].source


def _wait_for_log(service: processes.Service, text: str, timeout: float, times: int = 1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if service.log_path.read_text().count(text) >= times:
            return True
        time.sleep(0.1)
    return False


def test_a_run_granted_beside_its_job_is_reported_whole_and_a_duplicate_send_changes_nothing(
    alice, labs_loaded, django_db_setup
):
    processes.purge_queues("sim", "web")
    web = processes.start_web_worker(processes.database_url(connection.settings_dict))
    worker = processes.start_sim_worker("worker-sim-beside")
    try:
        run = processes.wait_until_finished(services.submit_run(alice, "vector-add", "numba", REFERENCE))
        assert run.verdict == "accepted" and run.attempts == 1
        started = run.events.get(type="started")
        assert started.payload.get("claim_beside_job") is True  # the job did not wait for its claim
        assert started.payload.get("claim_seconds", 0) > 0  # the ledger's answer, timed on the worker
        events_before = sorted(run.events.values_list("seq", flat=True))
        assert ledger.dispatch(run, services.build_job(run).to_wire())  # the same job once more, a new message
        assert _wait_for_log(worker, f"submission {run.pk} not run: the run has finished", timeout=60)
        assert _wait_for_log(worker, "succeeded in", timeout=60, times=2)  # the duplicate's task ended ...
        assert worker.log_path.read_text().rstrip().endswith("'not run'")  # ... as a delivery not run
    finally:
        worker.stop()
        web.stop()
    run.refresh_from_db()
    assert (run.verdict, run.attempts) == ("accepted", 1)
    assert sorted(run.events.values_list("seq", flat=True)) == events_before  # nothing of the duplicate landed
