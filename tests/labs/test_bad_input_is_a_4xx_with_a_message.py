"""Bad input to the API is refused with a 4xx JSON message and saves nothing; it never gives a server error."""

import json

import pytest
from django.test import Client

from labs.models import Submission
from tests.labs.asgi_http import asgi_post
from tests.labs.factories import client_for

pytestmark = pytest.mark.django_db

GOOD = {"exercise": "vector-add", "language": "numba", "source": "x = 1\n"}
DEEP = "[" * 100_000 + "]" * 100_000


def with_(**fields) -> str:
    return json.dumps(GOOD | fields)


@pytest.fixture
def alice_client(alice, labs_once) -> Client:
    return client_for(alice)


@pytest.mark.parametrize(
    ("raw", "status", "words"),
    [
        ('{"exercise": "vector-add", "language": "numba", "source": "x", "n": ' + "9" * 5000 + "}", 400, "digits"),
        ('{"exercise": ' + "1" * 5000 + "}", 400, "digits"),
        (DEEP, 400, "nested"),
        ('{"a": ' + "[" * 20 + "]" * 20 + "}", 400, "nested"),
        ('{"exercise": "vector-add", "language": "numba", "source": "\\ud800 lone"}', 400, "surrogate"),
        ('{"exercise": "\\udfff", "language": "numba", "source": "x"}', 400, "surrogate"),
        ('{"exercise": "vector-add", "language": "numba", "source": "a\\u0000b"}', 400, "NUL"),
        (with_(exercise=7), 400, "must be a string"),
        (with_(exercise=["vector-add"]), 400, "must be a string"),
        (with_(language={"x": 1}), 400, "must be a string"),
        (with_(language=None), 400, "Language must be"),
        (with_(source=42), 400, "must be a string"),
        (with_(source=True), 400, "must be a string"),
        (with_(exercise="x" * 1000), 400, "longer than"),
        ('"just a string"', 400, "JSON object"),
        ("null", 400, "JSON object"),
        ("1e999999", 400, "JSON object"),
        ("NaN", 400, "JSON object"),
        ("", 400, "not valid JSON"),
        ('{"exercise": "vector-add",', 400, "not valid JSON"),
        (b"\xff\xfe\x00garbage", 400, "UTF-8"),
        (with_(source="x" * (70 * 1024)), 413, "64 KiB"),
        (json.dumps(GOOD | {"pad": "y" * (1024 * 1024)}), 413, "KiB limit"),
    ],
)
def test_it_answers_a_4xx_with_a_plain_message(alice_client, raw, status, words):
    response = alice_client.post("/api/submissions", data=raw, content_type="application/json")
    assert response.status_code == status, response.content[:300]
    assert words.lower() in response.json()["error"].lower()
    assert Submission.objects.count() == 0


@pytest.mark.asyncio
@pytest.mark.parametrize("declared", [False, True])
async def test_an_oversized_body_is_413_with_or_without_content_length(settings, declared):
    settings.WARPLAB_MAX_BODY_BYTES = 4096
    chunks = [b"[" + b" " * 3000] * 3
    headers = [(b"content-length", b"9003")] if declared else []
    status, body = await asgi_post(chunks, [(b"content-type", b"application/json"), *headers])
    assert status == 413 and "4 KiB" in body["error"]


@pytest.mark.asyncio
async def test_a_small_streamed_body_reaches_the_site_and_a_missing_csrf_token_is_a_json_403(settings):
    status, body = await asgi_post([b'{"exercise":', b' "vector-add"}'], [(b"content-type", b"application/json")])
    assert status == 403 and "CSRF" in body["error"]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("get", "/api/submissions/" + "9" * 5000, 404),
        ("get", "/api/submissions/" + "9" * 19, 404),
        ("get", "/api/submissions/99999999", 404),
        ("get", "/api/submissions/1", 404),  # a run is named by its random public id, never its number
        ("get", "/api/submissions/00000000-0000-0000-0000-000000000001", 404),
        ("get", "/api/submissions?exercise=" + "a" * 500, 400),
        ("get", "/api/submissions?exercise=%00", 400),
        ("delete", "/api/submissions", 405),
        ("put", "/api/submissions/00000000-0000-0000-0000-000000000001", 405),
        ("get", "/api/no-such-endpoint", 404),
    ],
)
def test_odd_urls_and_methods_get_a_json_4xx(alice_client, method, path, status):
    response = getattr(alice_client, method)(path)
    assert response.status_code == status
    assert response.json()["error"]


def test_a_page_that_is_not_there_is_a_friendly_page_not_a_traceback(alice_client):
    response = alice_client.get("/no/such/page/")
    assert response.status_code == 404
    page = response.content.decode()
    assert 'id="error-message"' in page and "Traceback" not in page and "SECRET_KEY" not in page
