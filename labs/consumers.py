"""The live stream of one submission: its stored state first, then each new event."""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from labs import services, visibility
from labs.models import Submission


class SubmissionConsumer(AsyncJsonWebsocketConsumer):
    """Joins `submission.<id>` for the owner, instructors and admins; refuses anyone else; students see no internals."""

    async def connect(self) -> None:
        submission_id = self.scope["url_route"]["kwargs"]["submission_id"]
        state = await self._readable_state(submission_id)
        if state is None:
            await self.close(code=4403)
            return
        self.group_name = f"submission.{submission_id}"
        # Join before reading the snapshot, so no event falls between the two; the client dedups by seq.
        await self.channel_layer.group_add(self.group_name, self.channel_name)
        await self.accept()
        await self.send_json({"type": "snapshot", "submission": await self._readable_state(submission_id)})

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group_name"):
            await self.channel_layer.group_discard(self.group_name, self.channel_name)

    async def submission_event(self, message: dict) -> None:
        await self.send_json({"type": "event", "event": visibility.event_for(message["event"], self.staff)})

    @database_sync_to_async
    def _readable_state(self, submission_id: int) -> dict | None:
        submission = Submission.objects.select_related("exercise").filter(pk=submission_id).first()
        if submission is None or not services.can_view(self.scope.get("user"), submission):
            return None
        self.staff = visibility.sees_internals(self.scope.get("user"))  # permissions read the database: here
        return visibility.state_for(services.submission_state(submission), self.staff)
