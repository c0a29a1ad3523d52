"""A worker's claim on a job is answered ahead of the event batches already waiting for the web worker.

The claim is what a learner's first figure waits for (the worker runs nothing before the ledger grants it), and it
shared one queue with every run's event batches: under 8 learners its round trip was 0.12 s p50 and 0.54 s p95
(run 30). It now has a queue of its own (`claims`), which the web worker reads first, one message at a time
(labsite.settings). Real broker, real web worker, real test database; what is asserted is an order, not a time:
the claim's answer comes back while most of a backlog sent before it is still queued.

Its own module: a web worker of another test would take the backlog too.
"""

import pytest
import redis
from django.conf import settings
from django.db import connection

from gpu_worker.worker import service
from labs.runs import services
from tests import processes

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

BACKLOG = 400  # event batches, a few milliseconds of the web worker's time each


def _queued(queue: str) -> int:
    prefix = settings.CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"]
    with redis.Redis.from_url(settings.CELERY_BROKER_URL) as client:
        return int(client.llen(prefix + queue))


def test_a_claim_sent_behind_a_backlog_of_event_batches_is_answered_before_them(alice, labs_loaded, django_db_setup):
    processes.purge_queues("sim", "web")
    run = services.submit_run(alice, "vector-add", "numba", "x = 1", rate_limited=False)  # no sim worker takes it
    stale = [{"type": "log", "seq": 2, "message": "from an attempt that never was"}]
    for _ in range(BACKLOG):  # a lost attempt's batches: each locks the run's row, finds the attempt stale, drops it
        service.app.send_task(service.EVENTS_TASK, args=[run.pk, stale, 7], queue=service.settings.results_queue)
    assert _queued("web") == BACKLOG
    web = processes.start_web_worker(processes.database_url(connection.settings_dict))
    try:
        claim = service._claim(run.pk, "task-a")
        still_queued = _queued("web")
    finally:
        web.stop()
    assert claim == {"run": True, "attempt": 1, "reason": ""}
    assert still_queued > BACKLOG // 2, f"the claim waited for {BACKLOG - still_queued} of {BACKLOG} batches"
    run.refresh_from_db()
    assert run.status == "running" and run.claimed_task == "task-a" and not run.events.filter(type="log").exists()
