"""Tasks of the `web` queue: workers claim jobs and report events and results here; this side stores them.

A database that restarts under a report makes the task retry (Celery's retries, with backoff) instead of
losing the report; the claim is answered through the result backend while the worker waits for it.
"""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from labs.runs import services

# A report that meets a database restart waits for it rather than being lost: about 2 minutes of retries.
DATABASE_RETRIES = {
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 1,
    "retry_backoff_max": 10,
    "max_retries": 15,
    "ignore_result": True,
}


@shared_task(name="labs.record_events", **DATABASE_RETRIES)
def record_events(submission_id: int, events: list[dict], attempt: int | None = None) -> None:
    """A batch of one run's events, as workers send them (`gpu_worker.worker.service._Reporter`)."""
    services.record_events(submission_id, events, attempt)


@shared_task(name="labs.record_event", **DATABASE_RETRIES)
def record_event(submission_id: int, event: dict, attempt: int | None = None) -> None:
    """One event, as workers sent them before batches: a delivery queued across an upgrade still lands."""
    services.record_event(submission_id, event, attempt)


@shared_task(name="labs.record_result", **DATABASE_RETRIES)
def record_result(
    submission_id: int, result: dict, final_event: dict | None = None, attempt: int | None = None
) -> None:
    services.record_result(submission_id, result, final_event, attempt)


@shared_task(name="labs.record_profile", **DATABASE_RETRIES)
def record_profile(submission_id: int, facts: dict) -> None:
    services.record_profile(submission_id, facts)


@shared_task(name="labs.claim_run", ignore_result=False)
def claim_run(submission_id: int, task_id: str) -> dict:
    """The ledger's answer to a worker about to run a delivery (`labs.runs.ledger.claim`)."""
    return services.claim_run(submission_id, task_id)


@shared_task(name="labs.reap_runs", ignore_result=True)
def reap_runs() -> dict[str, list[int]]:
    return services.reap_runs()
