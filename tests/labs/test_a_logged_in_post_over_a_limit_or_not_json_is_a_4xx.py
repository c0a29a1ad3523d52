"""alice, logged in with her CSRF pair, posts through the whole ASGI app: over a limit or not JSON is a 4xx.

Past the CSRF check (unlike an anonymous post) every request reaches the view: a source over
MAX_SOURCE_BYTES, a body over DATA_UPLOAD_MAX_MEMORY_SIZE declared in Content-Length or streamed
without one, a body at the cap whose source is too long, and form or multipart bodies (which
Django's CSRF check parses, after which the raw body cannot be read: under the WSGI handler a
multipart post was a 500, under ASGI a misleading 400; both are a 415 now).
"""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings as django_settings
from django.middleware.csrf import get_token
from django.test import Client, RequestFactory

from gpu_worker.protocol import MAX_SOURCE_BYTES
from labs.models import Submission
from tests.labs.asgi_http import asgi_post, logged_in_headers

pytestmark = pytest.mark.django_db(transaction=True)  # the ASGI handler serves from its own thread
JSON = (b"content-type", b"application/json")
MULTIPART = b'--xx\r\nContent-Disposition: form-data; name="exercise"\r\n\r\nx\r\n--xx--\r\n'


def run_body(source: str, pad: int = 0) -> bytes:
    body = {"exercise": "vector-add", "language": "numba", "source": source}
    return json.dumps(body | ({"pad": "p" * pad} if pad else {})).encode()


def post(alice, chunks: list[bytes], *headers: tuple[bytes, bytes]) -> tuple[int, dict]:
    return async_to_sync(asgi_post)(chunks, [*headers, *logged_in_headers(alice)])


@pytest.fixture
def alice_in(alice, labs_loaded, settings):
    settings.WARPLAB_RUNS_IN_FLIGHT = 0
    return alice


def test_a_source_at_the_limit_is_taken(alice_in):
    status, answer = post(alice_in, [run_body("x" * MAX_SOURCE_BYTES)], JSON)
    assert status == 201, answer
    assert Submission.objects.filter(owner=alice_in).count() == 1


def test_a_source_a_byte_over_the_limit_is_413_with_a_message(alice_in):
    status, answer = post(alice_in, [run_body("x" * MAX_SOURCE_BYTES + "é")], JSON)
    assert status == 413 and f"{MAX_SOURCE_BYTES // 1024} KiB" in answer["error"]
    assert not Submission.objects.exists()


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_body_over_the_upload_cap_is_413_with_or_without_content_length(alice_in, declared):
    cap = django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    body = run_body("x = 1\n", pad=cap)
    chunks = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    length = [(b"content-length", str(len(body)).encode())] if declared else []
    status, answer = post(alice_in, chunks, JSON, *length)
    assert status == 413 and f"{cap // 1024} KiB" in answer["error"]
    assert not Submission.objects.exists()


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_body_at_the_upload_cap_reaches_the_view_and_its_long_source_is_413(alice_in, declared):
    cap = django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    body = run_body("x" * (cap - len(run_body(""))))
    assert len(body) == cap
    length = [(b"content-length", str(cap).encode())] if declared else []
    status, answer = post(alice_in, [body[: cap // 2], body[cap // 2 :]], JSON, *length)
    assert status == 413 and f"source is over the {MAX_SOURCE_BYTES // 1024} KiB" in answer["error"]


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        (b"multipart/form-data; boundary=xx", MULTIPART),
        (b"multipart/form-data; boundary=xx", b"not multipart at all"),
        (b"application/x-www-form-urlencoded", b"exercise=vector-add&language=numba&source=x"),
        (b"text/plain", run_body("x = 1\n")),
    ],
)
def test_a_body_that_is_not_json_is_415_with_a_message(alice_in, content_type, body):
    status, answer = post(alice_in, [body], (b"content-type", content_type))
    assert status == 415 and "application/json" in answer["error"]
    assert not Submission.objects.exists()


def test_json_with_a_charset_is_json(alice_in):
    status, answer = post(alice_in, [run_body("x = 1\n")], (b"content-type", b"Application/JSON; charset=utf-8"))
    assert status == 201, answer


def test_a_multipart_post_past_the_csrf_check_is_415_under_wsgi_too(alice_in):
    client = Client(enforce_csrf_checks=True)  # Django's WSGI handler, the CSRF check as served
    client.force_login(alice_in)
    token = get_token(RequestFactory().get("/"))
    client.cookies[django_settings.CSRF_COOKIE_NAME] = token
    response = client.generic(
        "POST", "/api/submissions", MULTIPART, content_type="multipart/form-data; boundary=xx", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 415 and "application/json" in response.json()["error"]
