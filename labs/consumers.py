"""The live stream of one submission: its stored state first, then each new event; a few client actions.

Who may read is checked at connect and again on every client action, so a viewer who lost
the right (logged out, role removed) is closed at their next message. A client message is
untrusted: bounded in size (WARPLAB_MAX_WS_MESSAGE_BYTES, else close 1009) and parsed by
`labs.api_input`; anything else gets an `error` message, never a crash. Actions:
`{"type": "snapshot"}` (send the stored state again) and `{"type": "ping"}` (answered `pong`).
"""

from functools import partial
from importlib import import_module
from types import SimpleNamespace
from typing import Any
from uuid import UUID

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib import auth

from labs.api_input import BadInput, parse_json
from labs.models import Submission
from labs.runs import visibility

NOT_ALLOWED = 4403
TOO_BIG = 1009
ACTIONS = ("snapshot", "ping")
# Read-only queries, run off the one thread Django's sync code shares: 500 viewers connecting at once
# would otherwise queue behind each other past Daphne's 5 s handshake timeout.
_db_read = partial(database_sync_to_async, thread_sensitive=False)


class SubmissionConsumer(AsyncJsonWebsocketConsumer):
    """Joins `submission.<pk>` for those who may read the run (`visibility.can_view`); refuses anyone else, a run
    that does not exist alike; students see no internals. The URL names the run by its random `public_id`."""

    async def connect(self) -> None:
        self.public_id = self.scope["url_route"]["kwargs"]["submission_id"]
        self.submission_id = await self._readable_pk(self.public_id)
        if self.submission_id is None:
            await self.close(code=NOT_ALLOWED)
            return
        self.group_name = f"submission.{self.submission_id}"
        # Join before reading the snapshot, so no event falls between the two; the client dedups by seq.
        await self.channel_layer.group_add(self.group_name, self.channel_name)
        await self.accept()
        await self._send_snapshot()

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group_name"):
            await self.channel_layer.group_discard(self.group_name, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        raw = text_data if text_data is not None else bytes_data or b""
        limit = int(settings.WARPLAB_MAX_WS_MESSAGE_BYTES)
        if len(raw) > limit:
            await self.close(code=TOO_BIG, reason=f"A message may be at most {limit} bytes.")
            return
        try:
            message = parse_json(raw, limit=limit, what="The message")
            action = message.get("type") if isinstance(message, dict) else None
            if action not in ACTIONS:
                raise BadInput(f"A message must be a JSON object whose type is one of: {', '.join(ACTIONS)}.")
        except BadInput as exc:
            await self.send_json({"type": "error", "message": exc.message})
            return
        if action == "ping":
            if await self._readable_pk(self.public_id) is None:
                await self.close(code=NOT_ALLOWED)
                return
            await self.send_json({"type": "pong"})
        else:
            await self._send_snapshot()

    async def _send_snapshot(self) -> None:
        state = await self._readable_state(self.submission_id)
        if state is None:
            await self.close(code=NOT_ALLOWED)
            return
        await self.send_json({"type": "snapshot", "submission": state})

    async def submission_event(self, message: dict) -> None:
        await self.send_json({"type": "event", "event": visibility.event_for(message["event"], self.staff)})

    @_db_read
    def _readable_pk(self, public_id: str) -> int | None:
        """The run's pk if the viewer may read it now; None if not, or if there is no such run (or no such name)."""
        try:
            name = UUID(public_id)
        except ValueError:
            return None
        submission = Submission.objects.filter(public_id=name).only("pk", "owner_id").first()
        if submission is None or not visibility.can_view(self._current_user(), submission):
            return None
        return submission.pk

    @_db_read
    def _readable_state(self, submission_id: int) -> dict | None:
        submission = Submission.objects.select_related("exercise").filter(pk=submission_id).first()
        user = self._current_user()
        if submission is None or not visibility.can_view(user, submission):
            return None
        self.staff = visibility.sees_internals(user)  # permissions read the database: here
        return visibility.state_for(visibility.submission_state(submission), self.staff)

    def _current_user(self) -> Any:
        """The viewer as of now: the session of the handshake's cookie read again (a logout elsewhere counts),
        the user's roles fresh. A `user` in the scope (put there by an in-process test) stands in for a cookie."""
        key = (self.scope.get("cookies") or {}).get(settings.SESSION_COOKIE_NAME)
        if key:
            fresh = import_module(settings.SESSION_ENGINE).SessionStore(key)
            return auth.get_user(SimpleNamespace(session=fresh))
        user = self.scope.get("user")
        if getattr(user, "is_authenticated", False):
            return auth.get_user_model().objects.filter(pk=user.pk, is_active=True).first()
        return None
