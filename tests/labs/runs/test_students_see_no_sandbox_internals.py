"""Sandbox and worker internals (uid, bubblewrap, "worker runs as root", host) reach staff only."""

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from labs.runs import services
from labsite.asgi import application
from tests.labs.courses.factories import make_course
from tests.labs.factories import client_for

SANDBOX = {"uid": 65534, "version": "bubblewrap 0.8.0", "uid_switch": "setresuid in the child (worker runs as root)"}


@pytest.fixture
def run(alice, labs_loaded):
    submission = services.submit_run(alice, "vector-add", "numba", "print('hi')")
    services.record_event(
        submission.pk, {"type": "started", "seq": 2, "backend": "sim", "worker": "host-7:123 (sim)", "sandbox": SANDBOX}
    )
    result = {"submission_id": submission.pk, "verdict": "accepted", "backend": "sim", "device": "simulator"}
    services.record_result(submission.pk, {**result, "sandbox": SANDBOX, "output": "hi\n"})
    return submission


def test_alice_reads_her_run_without_the_sandbox_or_the_worker_host(alice, run):
    body = client_for(alice).get(f"/api/submissions/{run.public_id}").json()
    started = next(e for e in body["events"] if e["type"] == "started")
    assert "sandbox" not in started and "worker" not in started and started["backend"] == "sim"
    assert "sandbox" not in body["result"] and body["result"]["output"] == "hi\n"
    assert "root" not in str(body) and "bubblewrap" not in str(body)


def test_ian_the_instructor_reads_the_whole_document(ian, alice, run):
    make_course(ian, students=(alice,))
    body = client_for(ian).get(f"/api/submissions/{run.public_id}").json()
    assert body["result"]["sandbox"] == SANDBOX
    assert next(e for e in body["events"] if e["type"] == "started")["worker"] == "host-7:123 (sim)"


def test_the_stored_document_stays_whole(run):
    run.refresh_from_db()
    assert run.result["sandbox"] == SANDBOX


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_alice_s_stream_leaves_out_the_internals_live_too(alice, labs_loaded):
    submission = await sync_to_async(services.submit_run)(alice, "vector-add", "numba", "print('hi')")
    ws = WebsocketCommunicator(
        application,
        f"/ws/submissions/{submission.public_id}/",
        headers=[(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")],
    )
    ws.scope["user"] = alice
    assert (await ws.connect())[0]
    await ws.receive_json_from(timeout=5)
    started = {"type": "started", "seq": 2, "backend": "sim", "worker": "host-7:1 (sim)", "sandbox": SANDBOX}
    await sync_to_async(services.record_event)(submission.pk, started)
    live = (await ws.receive_json_from(timeout=5))["event"]
    assert live["type"] == "started" and "sandbox" not in live and "worker" not in live
    await ws.disconnect()
