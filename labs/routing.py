"""WebSocket routes. A run's stream is named by its random `public_id`, as its API URL is; the route takes any
name, so a guessed one (a number, a stranger's) is the consumer's refusal, the same as for a run not one's own."""

from django.urls import path

from labs.consumers import SubmissionConsumer

websocket_urlpatterns = [path("ws/submissions/<str:submission_id>/", SubmissionConsumer.as_asgi())]
