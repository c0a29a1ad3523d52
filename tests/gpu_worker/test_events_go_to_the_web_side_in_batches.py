"""A worker sends a run's events in batches, in order, and what is pending before its result (real Redis broker).

The worker's reporter (`gpu_worker.worker.service._Reporter`) is given its own queue on the test's Redis; what it
sent is read back from the broker's list, as a web-side worker would take it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
import redis

from gpu_worker.protocol import Event, Result
from gpu_worker.worker import service
from tests.broker import queued_tasks

pytestmark = pytest.mark.integration


@pytest.fixture
def queue(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"reporter-test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(service.settings, "results_queue", name)
    yield name
    with redis.Redis.from_url(service.settings.broker_url) as client:
        client.delete(service.settings.broker_prefix + name)


def sent(queue: str) -> list[tuple[str, list]]:
    """Each task on the queue, oldest first: its name and its arguments."""
    return queued_tasks(service.settings.broker_url, service.settings.broker_prefix + queue)


def seqs(task: tuple[str, list]) -> list[int]:
    return [event["seq"] for event in task[1][1]]


def test_events_told_together_go_as_one_task_and_the_rest_before_the_result(queue: str) -> None:
    reporter = service._Reporter(41, attempt=1, linger=0.05)
    reporter(Event.of("started", 2, backend="sim"))
    reporter(Event.of("compiled", 3))
    reporter(Event.of("log", 4, message="occupancy next"))
    deadline = time.monotonic() + 10
    while not sent(queue) and time.monotonic() < deadline:  # the linger's timer sends them
        time.sleep(0.01)
    first = sent(queue)
    assert [(name, seqs((name, args))) for name, args in first] == [("labs.record_events", [2, 3, 4])]
    assert first[0][1][0] == 41 and first[0][1][2] == 1  # the run and the attempt the claim granted

    reporter(Event.of("check", 5, passed=True))
    reporter(Event.of("done", 6, verdict="accepted"))  # kept back for the result
    reporter.finish(Result.of(41, "accepted", "sim", "simulator", "all checks passed"))
    names = [name for name, _ in sent(queue)]
    assert names == ["labs.record_events", "labs.record_events", "labs.record_result"]
    assert seqs(sent(queue)[1]) == [5]
    assert sent(queue)[2][1][2]["seq"] == 6  # the final event travels with the result


def test_a_late_listing_told_after_the_verdict_is_sent_when_the_job_ends(queue: str) -> None:
    reporter = service._Reporter(42, linger=60)  # no timer fires within the test: only finish sends
    reporter(Event.of("started", 2, backend="sim"))
    reporter(Event.of("done", 5, verdict="accepted"))
    result = Result.of(42, "accepted", "sim", "simulator", "all checks passed")
    reporter.finish(result)  # the engine's early verdict
    reporter(Event.of("compiled", 3, sass_excerpt="FFMA R1, R2, R3, R4 ;"))  # numbered before the final event
    reporter(Event.of("log", 7, message="after the end"))  # numbered after it: the web side would drop it
    reporter.finish(result)  # the task's end
    assert [(name, seqs((name, args)) if name == "labs.record_events" else None) for name, args in sent(queue)] == [
        ("labs.record_events", [2]),
        ("labs.record_result", None),
        ("labs.record_events", [3]),
    ]


def test_with_no_linger_each_event_is_sent_as_it_comes(queue: str) -> None:
    reporter = service._Reporter(43, linger=0)
    reporter(Event.of("started", 2, backend="sim"))
    reporter(Event.of("compiled", 3))
    assert [seqs(task) for task in sent(queue)] == [[2], [3]]


def test_the_started_event_says_when_the_worker_took_the_delivery_and_how_long_its_claim_took(queue: str) -> None:
    facts = {"received_at": 1765000000.5, "claim_seconds": 0.042}
    reporter = service._Reporter(44, linger=0, started_facts=facts)
    reporter(Event.of("started", 2, backend="sim"))
    reporter(Event.of("compiled", 3))
    started, compiled = (task[1][1][0] for task in sent(queue))
    assert started["received_at"] == 1765000000.5 and started["claim_seconds"] == 0.042
    assert "claim_seconds" not in compiled  # the worker's facts go with the run's start only
