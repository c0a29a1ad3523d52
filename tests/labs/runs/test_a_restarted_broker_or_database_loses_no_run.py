"""Runs survive a restart of Redis or PostgreSQL under them: none lost, none recorded twice, each its verdict.

CI's share of what bench/chaos.py measures at full size, on servers of the test's own (bench/chaos.py's
`private_redis` and `private_postgres`), never the machine's shared ones. Redis runs without persistence, so its
restart loses the queued jobs and the running one's unacknowledged message: the job ledger's reaper must send
them again, and when the running one's result went down with Redis too, run it again once its lease (vector-add's
30 s wall-clock limit plus 2 s) has run out, the slowest case here at about 40 s. PostgreSQL is stopped in
immediate mode mid-run: the web queue's reports and the worker's claims must wait for it. The web-queue worker
(with beat: the reaper) and the sim worker are the real processes (tests/processes.py); the runs, vector-add's
Numba reference, go in through `labs.runs.services.submit_run`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import environ
import pytest
from django.core.management import call_command
from django.db import connection, connections
from django.db.utils import load_backend
from django.utils import timezone

from bench.chaos import PG_BIN, Outage, private_postgres, private_redis, retrying
from labs.curriculum.services import sync_labs
from labs.models import Submission
from labs.runs import services
from labsite.celery import app
from tests import chaos, processes
from tests.labs.factories import make_student

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

REFERENCE = chaos.CASES["reference-numba"].source
RUNS = 3  # the sim worker takes one at a time: one runs while two wait when the server goes down
DOWN_SECONDS = 1.5
# Silent 2 s past its wall-clock limit, a claimed attempt is presumed lost; the reaper looks every second.
WEB_ENV = {"WARPLAB_LOST_AFTER_SECONDS": "2", "WARPLAB_REAPER_SECONDS": "1"}
# A claim whose message went down with Redis is given up after 5 s (not 30): the delivery goes back to the queue.
SIM_ENV = {"WARPLAB_CLAIM_TIMEOUT": "5", "WARPLAB_CLAIM_RETRY_SECONDS": "0.5"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def forget_broker_connections() -> None:
    """Drop the web app's pooled broker connections: its next send connects to CELERY_BROKER_URL as it is now.

    What Celery itself does after a fork (`Celery._after_fork`), without the fork's signal.
    """
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def broker(settings) -> Iterator[tuple[str, Outage]]:
    """A private redis-server, this process's broker and the workers': its URL, and how to restart it."""
    with tempfile.TemporaryDirectory(prefix="warplab-restart-redis-") as folder:
        port = free_port()
        with private_redis(port, Path(folder)) as server:
            url = f"redis://127.0.0.1:{port}/0"
            # This process reads no results, so its result backend stays on the shared Redis.
            settings.CELERY_BROKER_URL = url
            forget_broker_connections()
            try:
                yield url, server
            finally:
                forget_broker_connections()


@pytest.fixture
def private_database() -> Iterator[tuple[str, Outage]]:
    """A private PostgreSQL cluster, migrated and loaded, as this process's database: its URL, how to restart it."""
    if not (PG_BIN / "initdb").exists() or os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip(f"a private PostgreSQL needs {PG_BIN}/initdb, root and runuser (it runs as the postgres user)")
    # Under /tmp, not pytest's tmp_path: the postgres user must reach the folder.
    with tempfile.TemporaryDirectory(prefix="warplab-restart-pg-") as folder:
        port = free_port()
        with private_postgres(port, Path(folder)) as server:
            url = f"postgres://postgres@127.0.0.1:{port}/warplab"
            config = connections.configure_settings({"default": environ.Env.db_url_config(url)})["default"]
            test_database = connections["default"]
            connections["default"] = load_backend(config["ENGINE"]).DatabaseWrapper(config, "default")
            try:
                call_command("migrate", verbosity=0)
                sync_labs()
                yield url, server
            finally:  # the test database back before pytest-django flushes it
                connections["default"].close()
                connections["default"] = test_database


@contextlib.contextmanager
def pipeline(name: str, redis_url: str, db_url: str) -> Iterator[tuple[processes.Service, processes.Service]]:
    """The web-queue worker with beat, and a sim worker (its log .run/test-worker-sim-`name`.log), on `redis_url`;
    both killed however the test ends."""
    broker_env = {"REDIS_URL": redis_url, "CELERY_BROKER_URL": redis_url, "CELERY_RESULT_BACKEND": redis_url}
    with contextlib.ExitStack() as stack:
        web = processes.start_web_worker(db_url, beat=True, **broker_env, **WEB_ENV)
        stack.callback(web.kill)
        sim = processes.start_sim_worker(f"worker-sim-{name}", **SIM_ENV)
        stack.callback(sim.kill)
        yield web, sim


def wait_for(condition: Callable[[], bool], seconds: float, failure: str) -> None:
    deadline = time.monotonic() + seconds
    while not retrying(condition):  # reads wait for a restarting PostgreSQL
        assert time.monotonic() < deadline, failure
        time.sleep(0.1)


def submit(user, n: int) -> list[int]:
    return [services.submit_run(user, "vector-add", "numba", REFERENCE, rate_limited=False).pk for _ in range(n)]


def in_flight(ids: list[int]) -> dict[int, str]:
    return dict(Submission.objects.filter(pk__in=ids, status__in=("queued", "running")).values_list("pk", "status"))


def all_finished(ids: list[int]) -> bool:
    """Every run has ended and its final event is stored (that comes just after the result)."""
    ended = Submission.objects.filter(pk__in=ids, events__type__in=("done", "error"))
    return ended.exclude(status__in=("queued", "running")).values("pk").distinct().count() == len(ids)


@dataclass
class Outcome:
    """What a restart mid-run left: the runs, which were queued or running then, and the run sent after it."""

    ids: list[int]
    in_flight: dict[int, str]  # run id: its status when the server went down (one running, one or two queued)
    restarted_at: datetime
    recovered_s: float  # from the restart until every run had finished
    report: chaos.Audit
    exit_codes: list[int | None]  # the workers', once every run had finished (None: still running)
    after: Submission


def restart_mid_run(user, server: Outage, workers: tuple[processes.Service, processes.Service]) -> Outcome:
    ids = submit(user, RUNS)
    seen: dict[int, str] = {}

    def one_running_and_one_queued() -> bool:
        seen.clear()
        seen.update(in_flight(ids))
        return {"queued", "running"} <= set(seen.values())

    wait_for(one_running_and_one_queued, 60, "no run was running with another queued")
    server.stop()
    time.sleep(DOWN_SECONDS)  # the outage itself
    server.start()
    restarted_at, restarted = timezone.now(), time.monotonic()
    wait_for(lambda: all_finished(ids), 90, "not every run finished after the restart")
    recovered_s = time.monotonic() - restarted
    exit_codes = [service.process.poll() for service in workers]
    (after,) = submit(user, 1)
    wait_for(lambda: all_finished([after]), 60, "the workers served no run after the restart")
    # Read back once a later run has been through as well, so that a result sent twice would be in.
    report = chaos.audit(dict.fromkeys(ids, "accepted"))
    return Outcome(ids, seen, restarted_at, recovered_s, report, exit_codes, Submission.objects.get(pk=after))


def assert_nothing_lost(outcome: Outcome) -> None:
    assert outcome.report.clean, outcome.report  # none lost, left running, recorded twice or errored
    assert outcome.report.finished == RUNS
    verdicts = Submission.objects.filter(pk__in=outcome.ids).values_list("verdict", flat=True)
    assert list(verdicts) == ["accepted"] * RUNS
    assert outcome.recovered_s < 60
    assert outcome.exit_codes == [None, None]
    assert (outcome.after.status, outcome.after.verdict) == ("done", "accepted")
    assert outcome.after.events.filter(type__in=["done", "error"]).count() == 1


def test_runs_queued_and_running_when_redis_restarts_empty_all_end_accepted(labs_loaded, alice, broker):
    redis_url, redis_server = broker
    with pipeline("redis-restart", redis_url, processes.database_url(connection.settings_dict)) as workers:
        outcome = restart_mid_run(alice, redis_server, workers)
    assert_nothing_lost(outcome)
    queued = [pk for pk, status in outcome.in_flight.items() if status == "queued"]
    resent = Submission.objects.filter(pk__in=queued, dispatched_at__gt=outcome.restarted_at)
    assert resent.count() == len(queued)  # their jobs went with the broker's data: the reaper sent them again


def test_runs_queued_and_running_when_postgres_restarts_all_end_accepted(broker, private_database):
    redis_url, _ = broker
    db_url, postgres = private_database
    with pipeline("postgres-restart", redis_url, db_url) as workers:
        outcome = restart_mid_run(make_student("alice"), postgres, workers)
    assert_nothing_lost(outcome)
