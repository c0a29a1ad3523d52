"""A test's WebSocket to one submission's stream, through the real ASGI application and channel layer."""

from __future__ import annotations

from typing import Any

from channels.testing import WebsocketCommunicator

from labsite.asgi import application


def connect(user: Any, submission_id: int) -> WebsocketCommunicator:
    """A socket to `/ws/submissions/<id>/` from the site origin, as `user` (in the scope, as a session would)."""
    communicator = WebsocketCommunicator(
        application,
        f"/ws/submissions/{submission_id}/",
        headers=[(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")],
    )
    communicator.scope["user"] = user
    return communicator
