"""The site as it was before 2026-12-04's second session: WebSockets behind Channels' AuthMiddlewareStack.

For `bench/run_load_ws.sh` only (`ASGI_APP=bench.asgi_auth_stack:application`), to measure side by side what
reading the session and the user on Django's shared thread at every handshake cost; `labsite.asgi` keeps only
the cookie parser, and the consumer reads the viewer itself off that thread.
"""

from typing import Any

from labsite.asgi import django_asgi_app  # first: it loads the app registry that channels.auth needs


def _application() -> Any:
    from channels.auth import AuthMiddlewareStack
    from channels.routing import ProtocolTypeRouter, URLRouter

    from labs.routing import websocket_urlpatterns
    from labsite.guards import BodySizeLimit, StrictOriginValidator

    return ProtocolTypeRouter(
        {
            "http": BodySizeLimit(django_asgi_app),
            "websocket": StrictOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        }
    )


application = _application()
