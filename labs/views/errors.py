"""Error answers: JSON `{"error": ...}` under /api/, a friendly page elsewhere; never a traceback.

Wired as Django's handler400/403/404/500 (labsite.urls) and CSRF_FAILURE_VIEW. A server error whose cause
is the database not answering (restarted, unreachable) is a 503 that says so and asks to retry, not a 500:
nothing is wrong with the request, and nothing was half-saved (each state change is one transaction).
"""

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader

DATABASE_DOWN = (OperationalError, InterfaceError)
RETRY_AFTER_S = 10

MESSAGES = {
    400: ("Bad request", "The request could not be understood."),
    403: ("Not allowed", "You are not allowed to see this page."),
    404: ("Not found", "There is no page here."),
    500: ("Something went wrong", "The lab hit an error on its side. It has been logged; please try again."),
    503: ("Back in a moment", "The lab's database is not answering just now. Nothing was saved; try again shortly."),
}


def _answer(request: HttpRequest, status: int, message: str = "") -> HttpResponse:
    title, default = MESSAGES[status]
    message = message or default
    if request.path.startswith("/api/"):
        return JsonResponse({"error": message}, status=status)
    # The 500 page is standalone (no base template, no context processors): it must render when little works.
    template = "errors/500.html" if status >= 500 else "errors/error.html"
    body = loader.render_to_string(template, {"title": title, "message": message, "status": status}, request)
    return HttpResponse(body, status=status)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, 400)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, 403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, 404)


def server_error(request: HttpRequest) -> HttpResponse:
    """Django calls this inside its exception handler, so `sys.exc_info()` names the cause."""
    if isinstance(sys.exc_info()[1], DATABASE_DOWN):
        response = _answer(request, 503)
        response["Retry-After"] = str(RETRY_AFTER_S)
        return response
    return _answer(request, 500)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    message = "This form or request came without a valid CSRF token (or from another site). Reload and try again."
    return _answer(request, 403, message)
