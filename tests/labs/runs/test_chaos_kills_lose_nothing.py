"""Chaos, CI size: 30 runs while the sim worker's main process is killed 4 times and its pool process 4 times.

0 lost, 0 duplicated, 0 left running, every run its own verdict, and whatever a killed process had started
(pool process, sandboxes) gone within 5 s. A run whose worker is killed on every attempt ends, after the
attempt cap, as an infrastructure error in plain words. On PostgreSQL only: the ledger's row locks
(`select_for_update`) are what is under test, and SQLite has none. The full size (200 runs, 20 + 20 kills,
Redis and PostgreSQL restarted) is bench/chaos.py.
"""

import time

import pytest
from django.conf import settings
from django.db import connection

from labs.models import Submission
from labs.runs import services
from tests import chaos, processes

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.integration,
    pytest.mark.skipif(
        not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"), reason="the chaos runs on PostgreSQL"
    ),
]
# Silent 2 s past its wall-clock limit, a claimed attempt is presumed lost; the reaper looks every 2 s.
WEB_ENV = {"WARPLAB_LOST_AFTER_SECONDS": "2", "WARPLAB_REAPER_SECONDS": "2"}


@pytest.fixture
def lab(labs_loaded, django_db_setup):
    processes.purge_queues("sim", "web")
    web = processes.start_web_worker(processes.database_url(connection.settings_dict), beat=True, **WEB_ENV)
    fleet = chaos.Fleet()
    yield fleet
    fleet.stop()
    web.stop()


def submit(user, n: int) -> dict[int, str]:
    expected = {}
    for i in range(n):
        source, verdict = chaos.MIX[i % len(chaos.MIX)]
        expected[services.submit_run(user, "vector-add", "numba", source, rate_limited=False).pk] = verdict
    return expected


def wait_for_running(deadline: float, attempts_below: int) -> Submission | None:
    while time.monotonic() < deadline:
        if (run := chaos.running_run(attempts_below)) is not None:
            return run
        time.sleep(0.1)
    return None


def test_thirty_runs_through_eight_kills_lose_nothing(alice, lab):
    expected = submit(alice, 30)
    for target in ["main", "pool"] * 4:
        run = wait_for_running(time.monotonic() + 60, settings.WARPLAB_MAX_ATTEMPTS - 1)
        assert run is not None, "no run was running to kill"
        time.sleep(0.3)  # into the job, not at its claim
        lab.kill(target, run.pk)
    assert chaos.wait_for_all(expected, timeout=150)
    report = chaos.audit(expected)
    assert report.clean, report
    assert report.finished == 30
    assert max(report.attempts) >= 2  # the kills did land mid-run
    assert all(k.orphans > 0 for k in lab.kills)  # each kill left processes behind: a pool process, sandboxes
    assert [k.orphans_gone_after is not None and k.orphans_gone_after < 5 for k in lab.kills] == [True] * 8


def test_a_run_whose_worker_dies_on_every_attempt_ends_as_an_infrastructure_error(alice, lab):
    expected = submit(alice, 1)
    (run_id,) = expected
    for _ in range(settings.WARPLAB_MAX_ATTEMPTS):
        run = wait_for_running(time.monotonic() + 60, settings.WARPLAB_MAX_ATTEMPTS + 1)
        assert run is not None and run.pk == run_id
        time.sleep(0.3)
        lab.kill("pool", run_id)
        while Submission.objects.filter(pk=run_id, attempts=run.attempts).exclude(status="error").exists():
            time.sleep(0.1)  # until the next delivery has claimed it (or been refused)
    assert chaos.wait_for_all(expected, timeout=60)
    run = Submission.objects.get(pk=run_id)
    assert (run.status, run.verdict, run.attempts) == ("error", "error", settings.WARPLAB_MAX_ATTEMPTS)
    assert run.result["message"] == (
        "This run was started 3 times and its worker was lost each time (worker lost). "
        "This is a problem on our side, not in your code. Please submit again."
    )
    assert run.events.filter(type__in=["done", "error"]).count() == 1
