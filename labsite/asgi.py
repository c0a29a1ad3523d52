"""ASGI entry point: HTTP through Django (bodies capped), WebSockets through Channels (exact origin, session auth).

A socket's viewer is read from the session cookie by the consumer itself, off the thread Django's sync code
shares (`labs.consumers`); Channels' AuthMiddlewareStack would read the session and the user on that one
thread for every handshake, before the consumer reads them again, so only its cookie parser is kept.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "labsite.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402  (needs the app registry loaded)
from channels.sessions import CookieMiddleware  # noqa: E402

from labs.routing import websocket_urlpatterns  # noqa: E402
from labsite.guards import BodySizeLimit, StrictOriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": BodySizeLimit(django_asgi_app),
        "websocket": StrictOriginValidator(CookieMiddleware(URLRouter(websocket_urlpatterns))),
    }
)
