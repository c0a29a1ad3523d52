"""The WebSocket stream: the stored state first, then live events; strangers are refused.

Runs the real ASGI application against the real Redis channel layer.
"""

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import AnonymousUser

from labs.runs import services
from tests.labs.courses.factories import make_course
from tests.labs.streams import connect

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


@pytest.fixture
def run(alice, labs_loaded):
    return services.submit_run(alice, "vector-add", "numba", "print('hi')")


@pytest.mark.asyncio
async def test_a_late_joiner_gets_the_stored_state_first_then_live_events(alice, run):
    await sync_to_async(services.record_event)(run.pk, {"type": "started", "seq": 2, "backend": "sim"})
    ws = connect(alice, run.public_id)
    connected, _ = await ws.connect()
    assert connected
    snapshot = await ws.receive_json_from(timeout=5)
    assert snapshot["type"] == "snapshot"
    assert [e["type"] for e in snapshot["submission"]["events"]] == ["queued", "started"]
    assert snapshot["submission"]["status"] == "running"

    await sync_to_async(services.record_event)(run.pk, {"type": "check", "seq": 3, "passed": True})
    live = await ws.receive_json_from(timeout=5)
    assert live == {"type": "event", "event": live["event"]} and live["event"]["type"] == "check"
    assert live["event"]["seq"] == 3
    await ws.disconnect()


@pytest.mark.asyncio
async def test_the_result_is_stored_before_done_is_sent(alice, run):
    ws = connect(alice, run.public_id)
    await ws.connect()
    await ws.receive_json_from(timeout=5)
    result = {"submission_id": run.pk, "verdict": "accepted", "backend": "sim", "device": "simulator"}
    await sync_to_async(services.record_result)(run.pk, result, {"type": "done", "seq": 9, "verdict": "accepted"})
    done = await ws.receive_json_from(timeout=5)
    assert done["event"]["type"] == "done" and done["event"]["verdict"] == "accepted"
    await sync_to_async(run.refresh_from_db)()
    assert run.status == "done" and run.verdict == "accepted" and run.result["device"] == "simulator"
    await ws.disconnect()


@pytest.mark.asyncio
async def test_a_workers_batch_is_stored_and_told_in_order_and_a_malformed_event_is_dropped_alone(alice, run):
    ws = connect(alice, run.public_id)
    await ws.connect()
    await ws.receive_json_from(timeout=5)
    batch = [
        {"type": "started", "seq": 2, "backend": "sim"},
        {"type": "no-such-type", "seq": 3},
        {"type": "compiled", "seq": 4},
        {"type": "check", "seq": 5, "passed": True},
    ]
    assert await sync_to_async(services.record_events)(run.pk, batch) == 3
    told = [(await ws.receive_json_from(timeout=5))["event"] for _ in range(3)]
    assert [(e["type"], e["seq"]) for e in told] == [("started", 2), ("compiled", 4), ("check", 5)]
    assert await ws.receive_nothing(timeout=0.5)
    await sync_to_async(run.refresh_from_db)()
    assert run.status == "running"
    stored = await sync_to_async(list)(run.events.order_by("seq").values_list("type", flat=True))
    assert stored == ["queued", "started", "compiled", "check"]
    await ws.disconnect()


@pytest.mark.asyncio
async def test_a_redelivered_event_is_not_sent_twice(alice, run):
    ws = connect(alice, run.public_id)
    await ws.connect()
    await ws.receive_json_from(timeout=5)
    for _ in range(2):
        await sync_to_async(services.record_event)(run.pk, {"type": "started", "seq": 2})
    assert (await ws.receive_json_from(timeout=5))["event"]["seq"] == 2
    assert await ws.receive_nothing(timeout=0.5)
    await ws.disconnect()


@pytest.mark.asyncio
@pytest.mark.parametrize("who", ["bob", "ian", "anonymous"])
async def test_anyone_else_is_refused_an_instructor_of_no_course_of_hers_too(run, bob, ian, who):
    ws = connect({"bob": bob, "ian": ian}.get(who, AnonymousUser()), run.public_id)
    connected, code = await ws.connect()
    assert not connected and code == 4403


@pytest.mark.asyncio
async def test_the_instructor_of_alices_course_may_watch(ian, alice, run):
    await sync_to_async(make_course)(ian, students=(alice,))
    ws = connect(ian, run.public_id)
    connected, _ = await ws.connect()
    assert connected and (await ws.receive_json_from(timeout=5))["submission"]["id"] == str(run.public_id)
    await ws.disconnect()


def test_a_nan_read_back_from_a_poisoned_output_is_stored_as_a_string(alice, run):
    mismatch = {"index": 999, "expected": 1.5, "got": float("nan")}
    result = {
        "submission_id": run.pk,
        "verdict": "wrong_answer",
        "backend": "sim",
        "device": "simulator",
        "check": {"passed": False, "mismatches": [mismatch], "max_abs_error": float("inf")},
    }
    services.record_result(run.pk, result)
    run.refresh_from_db()
    assert run.result["check"]["mismatches"][0]["got"] == "NaN"
    assert run.result["check"]["max_abs_error"] == "Infinity"
