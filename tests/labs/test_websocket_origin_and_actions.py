"""The WebSocket: only the site's exact origin (scheme, host and port) may open it; every action is re-authorised.

Runs the real ASGI application (guards, sessions, router) against the real Redis channel layer.
"""

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from labs.models import Membership
from labs.runs import services
from labsite.asgi import application
from labsite.guards import origin_allowed
from tests.labs.courses.factories import make_course

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def scope(origin: str | None, host: str = "127.0.0.1:8000", scheme: str = "ws") -> dict:
    headers = [(b"host", host.encode())] + ([(b"origin", origin.encode())] if origin is not None else [])
    return {"type": "websocket", "scheme": scheme, "headers": headers}


@pytest.mark.parametrize(
    ("origin", "host", "scheme", "allowed"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000", "ws", True),
        ("http://localhost:8000", "localhost:8000", "ws", True),
        ("http://127.0.0.1", "127.0.0.1", "ws", True),
        ("http://127.0.0.1:80", "127.0.0.1", "ws", True),
        ("https://127.0.0.1", "127.0.0.1:443", "wss", True),
        ("http://127.0.0.1:8001", "127.0.0.1:8000", "ws", False),  # same host, another port
        ("http://127.0.0.1", "127.0.0.1:8000", "ws", False),
        ("https://127.0.0.1:8000", "127.0.0.1:8000", "ws", False),  # another scheme
        ("http://127.0.0.1:8000", "127.0.0.1:8000", "wss", False),
        ("http://localhost:8000", "127.0.0.1:8000", "ws", False),  # another host name
        ("http://evil.example:8000", "evil.example:8000", "ws", False),  # a host not in ALLOWED_HOSTS
        ("null", "127.0.0.1:8000", "ws", False),
        ("", "127.0.0.1:8000", "ws", False),
        (None, "127.0.0.1:8000", "ws", False),
        ("http://127.0.0.1:99999", "127.0.0.1:8000", "ws", False),
        ("file://", "127.0.0.1:8000", "ws", False),
    ],
)
def test_only_the_exact_origin_is_allowed(origin, host, scheme, allowed):
    assert origin_allowed(scope(origin, host, scheme)) is allowed


def test_a_trusted_origin_behind_a_tls_proxy_is_allowed(settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://lab.example.org"]
    settings.ALLOWED_HOSTS = ["lab.example.org"]
    assert origin_allowed(scope("https://lab.example.org", "lab.example.org", "ws"))
    assert not origin_allowed(scope("https://lab.example.org:8443", "lab.example.org", "ws"))


def connect(user, submission_id: int, origin: bytes = b"http://127.0.0.1:8000") -> WebsocketCommunicator:
    headers = [(b"origin", origin), (b"host", b"127.0.0.1:8000")]
    communicator = WebsocketCommunicator(application, f"/ws/submissions/{submission_id}/", headers=headers)
    communicator.scope["user"] = user
    return communicator


@pytest.fixture
def run(alice, labs_loaded):
    return services.submit_run(alice, "vector-add", "numba", "print('hi')")


@pytest.mark.asyncio
async def test_a_page_on_another_port_cannot_read_alices_run(alice, run):
    ws = connect(alice, run.public_id, origin=b"http://127.0.0.1:9999")
    connected, code = await ws.connect()
    assert not connected and code == 4403


@pytest.mark.asyncio
async def test_it_answers_ping_and_snapshot_and_refuses_anything_else_with_a_message(alice, run):
    ws = connect(alice, run.public_id)
    assert (await ws.connect())[0]
    assert (await ws.receive_json_from(timeout=5))["type"] == "snapshot"
    await ws.send_json_to({"type": "ping"})
    assert await ws.receive_json_from(timeout=5) == {"type": "pong"}
    await ws.send_json_to({"type": "snapshot"})
    assert (await ws.receive_json_from(timeout=5))["submission"]["id"] == str(run.public_id)
    for bad in ["not json", "[]", '{"type": "delete"}', "[" * 2000, '{"n": ' + "9" * 1000 + "}", '"\\ud800"']:
        await ws.send_to(text_data=bad)
        answer = await ws.receive_json_from(timeout=5)
        assert answer["type"] == "error" and answer["message"], bad
    await ws.send_to(bytes_data=b"\xff\x00")
    assert (await ws.receive_json_from(timeout=5))["type"] == "error"
    await ws.disconnect()


@pytest.mark.asyncio
async def test_a_message_over_the_size_limit_closes_the_socket(alice, run, settings):
    settings.WARPLAB_MAX_WS_MESSAGE_BYTES = 1024
    ws = connect(alice, run.public_id)
    await ws.connect()
    await ws.receive_json_from(timeout=5)
    await ws.send_to(text_data='{"type": "ping", "pad": "' + "x" * 2000 + '"}')
    closed = await ws.receive_output(timeout=5)
    assert closed["type"] == "websocket.close" and closed["code"] == 1009 and "1024 bytes" in closed["reason"]


@pytest.mark.asyncio
async def test_an_instructor_who_loses_the_right_is_closed_at_the_next_action(ian, alice, run):
    course = await sync_to_async(make_course)(ian, students=(alice,))
    ws = connect(ian, run.public_id)
    assert (await ws.connect())[0]
    await ws.receive_json_from(timeout=5)

    @sync_to_async
    def take_the_right_away():  # alice leaves ian's course: he is no longer her course's staff
        Membership.objects.filter(course=course, user=alice).delete()

    await take_the_right_away()
    await ws.send_json_to({"type": "ping"})
    assert (await ws.receive_output(timeout=5)) == {"type": "websocket.close", "code": 4403}
