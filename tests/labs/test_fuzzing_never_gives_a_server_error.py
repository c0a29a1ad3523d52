"""Fuzzing (Hypothesis, derandomised, bounded): 600 generated API requests and 400 WebSocket messages.

Every answer is a success or a 4xx with a plain JSON message; none is a server error or a crash.
In-process (Django's test client, Channels' communicator against the real ASGI app and Redis layer),
so it costs seconds, and the same examples run every time.
"""

import json

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labs.models import Submission
from labs.runs import services
from labsite.asgi import application
from tests.labs.factories import client_for

CHARS = st.characters(codec=None, exclude_categories=())  # surrogates, NUL and controls included
TEXT = st.text(CHARS, max_size=40)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=10**30) | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
FIELD = st.sampled_from(["vector-add", "coalescing", "numba", "cuda", "x = 1\n", "", "   "]) | JSON
SUBMISSION = st.fixed_dictionaries({}, optional={"exercise": FIELD, "language": FIELD, "source": FIELD, "extra": JSON})
BODY = (
    SUBMISSION.map(json.dumps)
    | JSON.map(json.dumps)
    | st.integers(min_value=1, max_value=3000).map(lambda n: "[" * n + "]" * n)
    | st.integers(min_value=1, max_value=6000).map(lambda n: '{"exercise": ' + "9" * n + "}")
    | st.binary(max_size=200)
)
PATH = (
    st.sampled_from(["/api/submissions", "/api/submissions/{run}", "/api/nothing"])
    | st.text(st.characters(codec="ascii", categories=["Nd"]), min_size=1, max_size=40).map(
        lambda digits: f"/api/submissions/{digits}"
    )
    | st.uuids().map(lambda name: f"/api/submissions/{name}")
)
QUERY = st.none() | st.text(CHARS, max_size=300)
METHOD = st.sampled_from(["GET", "POST", "POST", "POST", "PUT", "DELETE", "PATCH"])

API_EXAMPLES, WS_SESSIONS, WS_MESSAGES = 600, 40, 10


@pytest.fixture
def alice_client(alice, labs_once, settings):
    settings.WARPLAB_RUNS_IN_FLIGHT = 0
    settings.WARPLAB_RUNS_PER_MINUTE = 10**6
    run = services.submit_run(alice, "vector-add", "numba", "x = 1\n")
    return client_for(alice), run.public_id


@pytest.mark.django_db
@settings(
    max_examples=API_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(method=METHOD, path=PATH, body=BODY, query=QUERY)
def test_generated_api_requests_get_a_success_or_a_4xx_with_a_message(alice_client, method, path, body, query):
    client, run = alice_client
    url = path.format(run=run)
    extra = {"QUERY_STRING": f"exercise={query}".encode("utf-8", "surrogatepass").decode("latin-1")} if query else {}
    response = client.generic(method, url, body, content_type="application/json", **extra)
    assert response.status_code < 500, (method, url, response.status_code)
    if response.status_code >= 400:
        message = response.json()["error"]
        assert isinstance(message, str) and message.strip(), (method, url)


WS_MESSAGE = (
    st.fixed_dictionaries({"type": st.sampled_from(["ping", "snapshot", "subscribe", "delete"]) | JSON}).map(json.dumps)
    | JSON.map(json.dumps)
    | st.text(CHARS, min_size=1, max_size=60)
    | st.integers(min_value=1, max_value=3000).map(lambda n: "[" * n)
    | st.binary(min_size=1, max_size=100)
    | st.integers(min_value=4000, max_value=6000).map(lambda n: "x" * n)
)


async def _session(user, run: int, messages: list) -> None:
    ws = WebsocketCommunicator(
        application, f"/ws/submissions/{run}/", headers=[(b"origin", b"http://testserver"), (b"host", b"testserver")]
    )
    ws.scope["user"] = user
    assert (await ws.connect(timeout=5))[0]
    assert (await ws.receive_json_from(timeout=5))["type"] == "snapshot"
    try:
        for message in messages:
            sent = {"bytes_data": message} if isinstance(message, bytes) else {"text_data": message}
            await ws.send_to(**sent)
            answer = await ws.receive_output(timeout=5)
            if answer["type"] == "websocket.close":  # only an oversized message may close it, with 1009
                assert answer["code"] == 1009 and len(message) > 4096, message[:80]
                return
            reply = json.loads(answer["text"])
            assert reply["type"] in ("pong", "snapshot", "error"), reply
            if reply["type"] == "error":
                assert reply["message"].strip()
    finally:
        await ws.disconnect()


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
@settings(
    max_examples=WS_SESSIONS,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(messages=st.lists(WS_MESSAGE, min_size=WS_MESSAGES, max_size=WS_MESSAGES))
def test_generated_websocket_messages_get_an_answer_never_a_crash(alice, labs_loaded, messages):
    run = Submission.objects.filter(owner=alice).first() or services.submit_run(alice, "vector-add", "numba", "x")
    async_to_sync(_session)(alice, run.public_id, messages)
