"""HTTP through the whole ASGI application (the body cap, then Django), as Daphne would hand it over.

`asgi_post` sends a body in chunks, with no Content-Length unless one is given; `logged_in_headers`
are a user's session and CSRF cookies and header, so a request reaches the view past the CSRF check.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.middleware.csrf import get_token
from django.test import RequestFactory

from tests.labs.factories import client_for


async def asgi_post(
    chunks: list[bytes], headers: list[tuple[bytes, bytes]], path: str = "/api/submissions"
) -> tuple[int, dict[str, Any]]:
    """POST `chunks` through the ASGI application; the status and the JSON answer."""
    from asgiref.testing import ApplicationCommunicator

    from labsite.asgi import application

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    app = ApplicationCommunicator(application, scope)
    for i, chunk in enumerate(chunks):
        await app.send_input({"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1})
    start = await app.receive_output(5)
    body = await app.receive_output(5)
    return start["status"], json.loads(body["body"])


def logged_in_headers(user: User) -> list[tuple[bytes, bytes]]:
    """`user`'s session cookie, a CSRF cookie and the matching X-CSRFToken header."""
    token = get_token(RequestFactory().get("/"))
    session = client_for(user).cookies[settings.SESSION_COOKIE_NAME].value
    cookie = f"{settings.SESSION_COOKIE_NAME}={session}; {settings.CSRF_COOKIE_NAME}={token}"
    return [(b"cookie", cookie.encode()), (b"x-csrftoken", token.encode())]
