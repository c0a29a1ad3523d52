"""Who may do what, site-wide: every page, API endpoint and WebSocket action x every persona, as a table.

Personas: alice (a student, owner of the run), bob (another student), ian (instructor of alice's course),
olga (instructor of bob's course, not alice's), ada (admin), a visitor who is not logged in, and alice's own
cookies sent from a foreign origin (same host at another port, or another scheme). A new page or endpoint is
one line in `HTTP` (or `WS`); course pages, with their TA, have their own table in
test_course_pages_authorisation.py.
"""

import uuid

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.middleware.csrf import get_token
from django.test import Client, RequestFactory

from labs.models import Submission
from labs.models.run import Status
from labs.runs import services
from labsite.asgi import application
from tests.labs.courses.factories import make_course
from tests.labs.factories import client_for, make_instructor

PERSONAS = ("alice", "bob", "ian", "olga", "ada", "anonymous")
LOGIN = "login"  # sent to the login page
ADMIN_LOGIN = "admin-login"  # sent to the admin's login page
SITE = "http://testserver"
FOREIGN = ("http://testserver:8001", "https://testserver", "http://evil.example")
RUN_BODY = '{"exercise": "vector-add", "language": "numba", "source": "x = 1\\n"}'
DRAFT_BODY = '{"exercise": "vector-add", "language": "numba", "source": "x = 2\\n"}'
BODIES = {"POST": RUN_BODY, "PUT": DRAFT_BODY}

# (method, path) -> outcome for (alice, bob, ian, olga, ada, anonymous). {run} is alice's run (its public id),
# {number} the same run's number (its pk), {nobody} a public id of no run, {module} a module slug.
HTTP = {
    ("GET", "/"): (200, 200, 200, 200, 200, LOGIN),
    ("GET", "/modules/{module}/"): (200, 200, 200, 200, 200, LOGIN),
    ("GET", "/modules/multi-gpu/calculators/"): (200, 200, 200, 200, 200, LOGIN),
    ("GET", "/exercises/vector-add/"): (200, 200, 200, 200, 200, LOGIN),
    ("GET", "/exercises/no-such-lab/"): (404, 404, 404, 404, 404, LOGIN),
    ("GET", "/fleet/"): (403, 403, 200, 200, 200, LOGIN),
    # drain or undrain a worker: the admins' alone (an instructor sees the fleet, but may not stop it); the
    # admin is sent back to the page, which says what came of it (here: no such action)
    ("POST", "/fleet/"): (403, 403, 403, 403, 302, LOGIN),
    ("GET", "/fleet/plan/"): (403, 403, 403, 403, 200, LOGIN),
    ("GET", "/fleet/dashboard/"): (403, 403, 403, 403, 200, LOGIN),
    ("GET", "/fleet/plan/export/kubernetes/"): (403, 403, 403, 403, 409, LOGIN),  # 409: no plan to export yet
    ("GET", "/api/openapi.json"): (200, 200, 200, 200, 200, 200),  # public: the API's description, nobody's data
    ("GET", "/api/submissions"): (200, 200, 200, 200, 200, 401),
    ("POST", "/api/submissions"): (201, 201, 201, 201, 201, 401),
    # alice's run: hers, her course's instructor's and the admin's; to bob and olga it is as if it did not exist
    ("GET", "/api/submissions/{run}"): (200, 404, 200, 404, 200, 401),
    ("GET", "/api/submissions/{nobody}"): (404, 404, 404, 404, 404, 401),
    ("GET", "/api/submissions/{number}"): (404, 404, 404, 404, 404, 404),  # a run's number names nothing
    ("GET", "/api/submissions/999999"): (404, 404, 404, 404, 404, 404),
    ("DELETE", "/api/submissions/{run}"): (405, 405, 405, 405, 405, 405),
    ("POST", "/api/submissions/{run}/profile"): (409, 404, 409, 404, 409, 401),  # 409: a sim run has no profile
    ("POST", "/api/submissions/{number}/profile"): (404, 404, 404, 404, 404, 404),
    # one's own drafts: everyone logged in has them (and reads only their own)
    ("GET", "/api/drafts?exercise=vector-add"): (200, 200, 200, 200, 200, 401),
    ("GET", "/api/drafts?exercise=no-such-lab"): (404, 404, 404, 404, 404, 401),
    ("PUT", "/api/drafts"): (200, 200, 200, 200, 200, 401),
    ("DELETE", "/api/drafts"): (405, 405, 405, 405, 405, 405),
    ("GET", "/courses/"): (200, 200, 200, 200, 200, LOGIN),
    ("GET", "/authoring/"): (403, 403, 200, 200, 200, LOGIN),
    ("GET", "/authoring/no-such-draft/"): (403, 403, 404, 404, 404, LOGIN),
    ("GET", "/lti/jwks/"): (200, 200, 200, 200, 200, 200),  # public, as LTI needs: the tool's public keys
    ("POST", "/lti/launch/"): (400, 400, 400, 400, 400, 400),  # public, and refused without a signed id_token
    ("GET", "/lti/login/"): (400, 400, 400, 400, 400, 400),
    # registering an LMS: the admins' page (the tool's addresses and key set, and the form; 400: an empty form)
    ("GET", "/lti/platforms/"): (403, 403, 403, 403, 200, LOGIN),
    ("POST", "/lti/platforms/"): (403, 403, 403, 403, 400, LOGIN),
    # public: an invitation's token is the credential; a wrong or used one is refused on the page (200)
    ("GET", "/accounts/invitation/MQ/not-a-token/"): (200, 200, 200, 200, 200, 200),
    ("GET", "/accounts/invitation/done/"): (200, 200, 200, 200, 200, 200),
    ("GET", "/admin/"): (ADMIN_LOGIN, ADMIN_LOGIN, 200, 200, 200, ADMIN_LOGIN),
    ("GET", "/admin/labs/submission/"): (ADMIN_LOGIN, ADMIN_LOGIN, 403, 403, 200, ADMIN_LOGIN),
    ("GET", "/admin/auth/user/"): (ADMIN_LOGIN, ADMIN_LOGIN, 403, 403, 200, ADMIN_LOGIN),
}
# WebSocket action on alice's run -> outcome for (alice, bob, ian, olga, ada, anonymous): "ok" or the close code.
WS = {
    "connect": ("ok", 4403, "ok", 4403, "ok", 4403),
    "ping": ("ok", 4403, "ok", 4403, "ok", 4403),
    "snapshot": ("ok", 4403, "ok", 4403, "ok", 4403),
}


def _world(alice, bob, ian, ada):
    olga = make_instructor("olga")
    make_course(ian, students=(alice,))
    make_course(olga, "Elsewhere", students=(bob,))
    run = services.submit_run(alice, "vector-add", "numba", "print('hi')")
    Submission.objects.filter(pk=run.pk).update(status=Status.DONE)  # so her next run is not held back as in flight
    module = run.exercise.module.slug
    people = {"alice": alice, "bob": bob, "ian": ian, "olga": olga, "ada": ada, "anonymous": None}
    return people, {"run": run.public_id, "number": run.pk, "nobody": uuid.uuid4(), "module": module}


@pytest.fixture
def world(alice, bob, ian, ada, labs_once):
    return _world(alice, bob, ian, ada)


@pytest.fixture
def committed_world(alice, bob, ian, ada, labs_loaded):
    """The same, committed: the socket's consumer reads the database from other threads."""
    return _world(alice, bob, ian, ada)


def _client(people, persona) -> Client:
    return Client() if people[persona] is None else client_for(people[persona])


def _outcome(response) -> int | str:
    if response.status_code == 302 and "/admin/login/" in response["Location"]:
        return ADMIN_LOGIN
    if response.status_code == 302 and "/accounts/login/" in response["Location"]:
        return LOGIN
    return response.status_code


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path"), list(HTTP))
def test_each_page_and_endpoint_answers_each_persona_as_its_role_allows(world, method, path):
    people, ids = world
    for persona, expected in zip(PERSONAS, HTTP[(method, path)], strict=True):
        client = _client(people, persona)
        url = path.format(**ids)
        if method in BODIES:
            response = client.generic(method, url, data=BODIES[method], content_type="application/json")
        else:
            response = client.generic(method, url)
        assert _outcome(response) == expected, (persona, method, url, response.status_code)
        assert "Access-Control-Allow-Origin" not in response  # no other origin may read any answer
        if url.startswith("/api/") and response.status_code >= 400:
            assert response.json()["error"], (persona, url)


@pytest.mark.django_db
@pytest.mark.parametrize("origin", FOREIGN)
@pytest.mark.parametrize(("method", "path", "done"), [("POST", "/api/submissions", 201), ("PUT", "/api/drafts", 200)])
def test_alices_cookies_from_a_foreign_origin_cannot_post(world, origin, method, path, done):
    people, _ = world
    client = Client(enforce_csrf_checks=True)
    client.force_login(people["alice"])
    token = get_token(RequestFactory().get("/"))
    client.cookies["csrftoken"] = token  # the worst case: even with a valid token pair, the origin decides
    sent = {"data": BODIES[method], "content_type": "application/json", "HTTP_X_CSRFTOKEN": token}
    response = client.generic(method, path, HTTP_ORIGIN=origin, **sent)
    assert response.status_code == 403 and "CSRF" in response.json()["error"]
    assert client.generic(method, path, HTTP_ORIGIN=SITE, **sent).status_code == done


async def _ws_outcome(user, run_id: object, action: str, origin: str = SITE) -> str | int:
    headers = [(b"origin", origin.encode()), (b"host", b"testserver")]
    ws = WebsocketCommunicator(application, f"/ws/submissions/{run_id}/", headers=headers)
    ws.scope["user"] = user or AnonymousUser()
    connected, code = await ws.connect(timeout=5)
    if not connected:
        return code
    try:
        first = await ws.receive_json_from(timeout=5)
        assert first["type"] == "snapshot"
        if action == "connect":
            return "ok"
        await ws.send_json_to({"type": action})
        answer = await ws.receive_output(timeout=5)
        if answer["type"] == "websocket.close":
            return answer["code"]
        return "ok"
    finally:
        await ws.disconnect()


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_each_websocket_action_answers_each_persona_and_no_foreign_origin(committed_world):
    people, ids = committed_world
    asked = [(people[persona], action, SITE) for action in WS for persona in PERSONAS]
    asked += [(people["alice"], "connect", origin) for origin in FOREIGN]  # another port, scheme or host

    async def every_outcome() -> list[str | int]:
        # one event loop for every socket: a loop per socket left channels_redis's receive to cancel
        # at each loop's close, and one such close hung once in CI
        found = [await _ws_outcome(user, ids["run"], action, origin) for user, action, origin in asked]
        # her run by its number, and a name of no run: refused as a stranger's run is, even to her and the admin
        for name in (ids["number"], ids["nobody"], "not-a-name"):
            found += [await _ws_outcome(people[who], name, "connect") for who in ("alice", "ada")]
        return found

    outcomes = iter(async_to_sync(every_outcome)())
    for action, expected_row in WS.items():
        for persona, expected in zip(PERSONAS, expected_row, strict=True):
            assert next(outcomes) == expected, (persona, action)
    for origin in FOREIGN:
        assert next(outcomes) == 4403, origin
    assert list(outcomes) == [4403] * 6
