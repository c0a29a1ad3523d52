"""ASGI entry point: HTTP through Django (bodies capped), WebSockets through Channels (exact origin, session auth)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "labsite.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs the app registry loaded)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from labs.routing import websocket_urlpatterns  # noqa: E402
from labsite.guards import BodySizeLimit, StrictOriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": BodySizeLimit(django_asgi_app),
        "websocket": StrictOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
