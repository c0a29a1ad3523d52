"""ASGI guards in front of the site (wired in `labsite.asgi`): an exact WebSocket origin check and a body cap.

`StrictOriginValidator` accepts a WebSocket handshake only when its Origin is the page's own
origin (scheme, host and port all equal to the request's, the host in ALLOWED_HOSTS) or one
listed in CSRF_TRUSTED_ORIGINS. Channels' AllowedHostsOriginValidator compares host names
only, so a page on the same host at another port (another student's server) could open a
socket with the learner's cookies and read their runs.

`BodySizeLimit` answers 413 to an HTTP request whose body passes WARPLAB_MAX_BODY_BYTES,
declared in Content-Length or streamed without one, before Django buffers it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_tuple(origin: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin such as `http://127.0.0.1:8000`; None when it is not one."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme]


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def origin_allowed(scope: Scope) -> bool:
    """Whether the handshake's Origin is this request's own origin or an explicitly trusted one."""
    origin = origin_tuple(_header(scope, b"origin") or "")
    if origin is None:
        return False
    if origin in {origin_tuple(trusted) for trusted in settings.CSRF_TRUSTED_ORIGINS}:
        return True
    host = _header(scope, b"host")
    if not host:
        return False
    domain, port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
    try:
        own = (scheme, domain.strip("[]"), int(port) if port else DEFAULT_PORTS[scheme])
    except ValueError:
        return False
    return origin == own


class StrictOriginValidator:
    """Refuse (close before accept, 403 to the browser) a WebSocket whose Origin is not exactly the site's."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and not origin_allowed(scope):
            message = await receive()
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.close", "code": 4403})
            return
        await self.app(scope, receive, send)


async def _too_large(send: Send, limit: int) -> None:
    body = json.dumps({"error": f"The request body is over the {limit // 1024} KiB limit."}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BodySizeLimit:
    """Read an HTTP body up to the limit (Django would buffer any size), then hand it on whole."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = int(settings.WARPLAB_MAX_BODY_BYTES)
        declared = _header(scope, b"content-length")
        if declared is not None and (not declared.strip().isdigit() or int(declared) > limit):
            await _too_large(send, limit)
            return
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: pass that on
                await self.app(scope, _replay([message], receive), send)
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                await _too_large(send, limit)
                return
            if not message.get("more_body", False):
                break
        whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([whole], receive), send)


def _replay(first: list[dict[str, Any]], receive: Receive) -> Receive:
    pending = list(first)

    async def replayed() -> dict[str, Any]:
        return pending.pop(0) if pending else await receive()

    return replayed
