"""Tasks of the `web` queue: workers report events and results here; this side stores them."""

from celery import shared_task

from labs import services


@shared_task(name="labs.record_event", ignore_result=True)
def record_event(submission_id: int, event: dict) -> None:
    services.record_event(submission_id, event)


@shared_task(name="labs.record_result", ignore_result=True)
def record_result(submission_id: int, result: dict, final_event: dict | None = None) -> None:
    services.record_result(submission_id, result, final_event)


@shared_task(name="labs.record_profile", ignore_result=True)
def record_profile(submission_id: int, facts: dict) -> None:
    services.record_profile(submission_id, facts)


@shared_task(name="labs.fail_lost_runs", ignore_result=True)
def fail_lost_runs() -> list[int]:
    return services.fail_lost_runs()
