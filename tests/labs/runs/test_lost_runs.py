"""A run whose worker went silent past its limit ends as an error in plain words, never stuck as running."""

from datetime import timedelta

import pytest
from django.utils import timezone

from labs.models import Submission
from labs.runs import services

pytestmark = pytest.mark.django_db


def test_a_silent_running_run_is_reported_as_worker_lost(alice, labs_loaded, settings):
    settings.WARPLAB_LOST_AFTER_SECONDS = 10
    run = services.submit_run(alice, "vector-add", "numba", "x = 1")
    services.record_event(run.pk, {"type": "started", "seq": 2})
    Submission.objects.filter(pk=run.pk).update(last_event_at=timezone.now() - timedelta(seconds=60))
    assert services.reap_runs()["failed"] == [run.pk]
    run.refresh_from_db()
    assert run.status == "error" and run.verdict == "error"
    assert "worker lost" in run.result["message"]
    assert run.events.last().type == "error"


def test_a_run_still_within_its_limit_is_left_alone(alice, labs_loaded):
    run = services.submit_run(alice, "vector-add", "numba", "x = 1")
    services.record_event(run.pk, {"type": "started", "seq": 2})
    assert services.reap_runs()["failed"] == []
    run.refresh_from_db()
    assert run.status == "running"


def test_a_queued_run_waits_for_a_worker(alice, labs_loaded):
    run = services.submit_run(alice, "vector-add", "numba", "x = 1")
    Submission.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(hours=1))
    assert services.reap_runs()["failed"] == []
