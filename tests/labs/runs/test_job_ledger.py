"""The job ledger in the run's row: one claim per live delivery, fenced reports, a lease, a reaper and an attempt cap.

These call the web side's services as the `web` queue's tasks do, on the real test database and broker; the
workers' side of the same protocol is driven by real worker processes in test_chaos_kills_lose_nothing.py.
"""

from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.utils import timezone

from labs.models import Submission
from labs.runs import ledger, services
from tests import processes

pytestmark = pytest.mark.django_db

ACCEPTED = {"verdict": "accepted", "backend": "sim", "device": "simulator", "message": "1 check passed"}


def queued_jobs(queue: str = "sim") -> list[bytes]:
    prefix = settings.CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"]
    with redis.Redis.from_url(settings.CELERY_BROKER_URL) as client:
        return client.lrange(prefix + queue, 0, -1)


@pytest.fixture
def run(alice, labs_loaded, django_capture_on_commit_callbacks):
    processes.purge_queues("sim")
    with django_capture_on_commit_callbacks(execute=True):  # the job is sent on commit
        return services.submit_run(alice, "vector-add", "numba", "x = 1", rate_limited=False)


def test_a_submitted_run_is_dispatched_once_and_noted(run):
    run.refresh_from_db()
    assert run.dispatched_at is not None
    assert len(queued_jobs()) == 1


def test_a_first_claim_is_attempt_one_and_another_delivery_is_refused(run):
    assert services.claim_run(run.pk, "task-a") == {"run": True, "attempt": 1, "reason": ""}
    refused = services.claim_run(run.pk, "task-b")
    assert refused["run"] is False and "live lease" in refused["reason"]
    run.refresh_from_db()
    assert (run.status, run.attempts, run.claimed_task) == ("running", 1, "task-a")
    assert run.lease_until > timezone.now() + timedelta(seconds=settings.WARPLAB_LOST_AFTER_SECONDS)


def test_the_same_message_delivered_again_is_the_next_attempt(run):
    services.claim_run(run.pk, "task-a")
    assert services.claim_run(run.pk, "task-a") == {"run": True, "attempt": 2, "reason": ""}


def test_a_job_redelivered_more_than_twice_ends_as_an_infrastructure_error(run):
    granted = [services.claim_run(run.pk, "task-a")["run"] for _ in range(3)]
    fourth = services.claim_run(run.pk, "task-a")
    assert granted == [True, True, True] and fourth["run"] is False
    run.refresh_from_db()
    assert (run.status, run.verdict) == ("error", "error")
    assert run.result["message"].startswith("This run was started 3 times and its worker was lost each time")
    assert [e.type for e in run.events.all()] == ["queued", "error"]
    assert services.claim_run(run.pk, "task-a")["reason"] == "the run has finished"


def test_a_result_is_recorded_once_however_often_it_is_delivered(run):
    attempt = services.claim_run(run.pk, "task-a")["attempt"]
    final = {"type": "done", "seq": 9, "verdict": "accepted"}
    assert services.record_result(run.pk, {**ACCEPTED, "submission_id": run.pk}, final, attempt) is True
    again = {**ACCEPTED, "verdict": "wrong_answer", "submission_id": run.pk}
    assert services.record_result(run.pk, again, {**final, "seq": 10}, attempt) is False
    run.refresh_from_db()
    assert run.verdict == "accepted" and run.events.filter(type="done").count() == 1


def test_a_lost_attempts_late_reports_are_dropped(run):
    services.claim_run(run.pk, "task-a")
    services.claim_run(run.pk, "task-a")  # attempt 1's worker was lost; attempt 2 runs
    services.record_event(run.pk, {"type": "log", "seq": 5, "message": "from the lost attempt"}, attempt=1)
    stale = services.record_result(run.pk, {**ACCEPTED, "submission_id": run.pk}, None, attempt=1)
    assert stale is False and not run.events.filter(seq=5).exists()
    services.record_event(run.pk, {"type": "log", "seq": 1005, "message": "from attempt 2"}, attempt=2)
    assert run.events.filter(seq=1005).exists()
    lost_batch = [{"type": "log", "seq": 6, "message": "lost"}, {"type": "log", "seq": 7, "message": "lost too"}]
    assert services.record_events(run.pk, lost_batch, attempt=1) == 0
    assert not run.events.filter(seq__in=(6, 7)).exists()


def test_each_event_renews_the_lease(run):
    services.claim_run(run.pk, "task-a")
    Submission.objects.filter(pk=run.pk).update(lease_until=timezone.now() + timedelta(seconds=1))
    services.record_event(run.pk, {"type": "started", "seq": 2}, attempt=1)
    run.refresh_from_db()
    assert run.lease_until > timezone.now() + timedelta(seconds=settings.WARPLAB_LOST_AFTER_SECONDS)


def test_a_run_whose_lease_ran_out_is_queued_and_sent_again(run):
    services.claim_run(run.pk, "task-a")
    Submission.objects.filter(pk=run.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    processes.purge_queues("sim")
    report = services.reap_runs()
    assert report["requeued"] == [run.pk] and run.pk in report["dispatched"]
    run.refresh_from_db()
    assert (run.status, run.claimed_task, run.lease_until) == ("queued", "", None)
    assert len(queued_jobs()) == 1
    assert services.claim_run(run.pk, "task-new")["attempt"] == 2


def test_a_run_whose_lease_ran_out_on_its_last_attempt_ends_as_worker_lost(run):
    for _ in range(settings.WARPLAB_MAX_ATTEMPTS):
        services.claim_run(run.pk, "task-a")
    Submission.objects.filter(pk=run.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert services.reap_runs()["failed"] == [run.pk]
    run.refresh_from_db()
    assert run.status == "error" and "worker lost" in run.result["message"]


def test_jobs_of_a_broker_that_lost_its_data_are_sent_again(run):
    services.reap_runs()  # the broker's epoch is noted
    assert services.reap_runs()["dispatched"] == []
    with redis.Redis.from_url(settings.CELERY_BROKER_URL) as client:  # as a restart without persistence would
        prefix = settings.CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"]
        client.delete(prefix + "sim", prefix + ledger.EPOCH_KEY)
    assert services.reap_runs()["dispatched"] == [run.pk]
    assert len(queued_jobs()) == 1


def test_a_run_never_handed_to_the_broker_is_sent_by_the_reaper(run):
    processes.purge_queues("sim")
    Submission.objects.filter(pk=run.pk).update(dispatched_at=None, created_at=timezone.now() - timedelta(minutes=1))
    assert run.pk in services.reap_runs()["dispatched"]
    assert len(queued_jobs()) == 1
