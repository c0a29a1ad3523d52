"""A job whose worker dies mid-run is not lost: the broker redelivers it to another worker, which runs it again.

Its own module, so that no other test's worker can take the job.
"""

import time

import pytest
from django.db import connection

from gpu_worker.exercise.labspec import find_lab
from labs.runs import services
from tests import processes

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

CASES = {case.name: case for case in find_lab("vector-add").cases}

# Still running in the simulator when its worker is killed: every simulated thread waits at 30 barriers
# (a kernel file runs nothing at import, so the delay has to be in the kernel).
SLOW_BUT_CORRECT = CASES["reference-numba"].source.replace(
    "    i = cuda.grid(1)\n", "    i = cuda.grid(1)\n    for _ in range(30):\n        cuda.syncthreads()\n"
)
assert CASES["reference-numba"].source != SLOW_BUT_CORRECT
# The rescuer gives back the dead worker's job 3 s after it was taken, looking every second (Celery's broker
# options; the job ledger's lease would run it again too, later).
QUICK_RESTORE = {"WARPLAB_VISIBILITY_TIMEOUT": "3", "WARPLAB_RESTORE_SECONDS": "1"}


def test_a_job_whose_worker_is_killed_is_run_again_by_another_worker(alice, labs_loaded, django_db_setup):
    processes.purge_queues("sim", "web")
    web = processes.start_web_worker(processes.database_url(connection.settings_dict))
    doomed = processes.start_sim_worker("worker-sim-doomed", **QUICK_RESTORE)
    try:
        run = services.submit_run(alice, "vector-add", "numba", SLOW_BUT_CORRECT)
        deadline = time.monotonic() + 30
        while run.status != "running" and time.monotonic() < deadline:
            time.sleep(0.1)
            run.refresh_from_db()
        assert run.status == "running"
        doomed.kill()  # SIGKILL to the whole worker, mid-job: nothing acknowledged the message
        rescuer = processes.start_sim_worker("worker-sim-rescuer", **QUICK_RESTORE)
        try:
            run = processes.wait_until_finished(run, timeout=120)
        finally:
            rescuer.stop()
    finally:
        web.stop()
    assert run.verdict == "accepted"
    assert any("run again (attempt 2)" in e.payload.get("message", "") for e in run.events.filter(type="log"))
    assert run.attempts == 2 and run.events.filter(type="done").count() == 1
