"""WebSocket routes."""

from django.urls import path

import labs.converters  # noqa: F401  (registers <id:...>)
from labs.consumers import SubmissionConsumer

websocket_urlpatterns = [path("ws/submissions/<id:submission_id>/", SubmissionConsumer.as_asgi())]
