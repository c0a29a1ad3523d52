"""Error answers: JSON `{"error": ...}` under /api/, a friendly page elsewhere; never a traceback.

Wired as Django's handler400/403/404/500 (labsite.urls) and CSRF_FAILURE_VIEW.
"""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader

MESSAGES = {
    400: ("Bad request", "The request could not be understood."),
    403: ("Not allowed", "You are not allowed to see this page."),
    404: ("Not found", "There is no page here."),
    500: ("Something went wrong", "The lab hit an error on its side. It has been logged; please try again."),
}


def _answer(request: HttpRequest, status: int, message: str = "") -> HttpResponse:
    title, default = MESSAGES[status]
    message = message or default
    if request.path.startswith("/api/"):
        return JsonResponse({"error": message}, status=status)
    # The 500 page is standalone (no base template, no context processors): it must render when little works.
    template = "errors/500.html" if status == 500 else "errors/error.html"
    body = loader.render_to_string(template, {"title": title, "message": message, "status": status}, request)
    return HttpResponse(body, status=status)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, 400)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, 403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, 404)


def server_error(request: HttpRequest) -> HttpResponse:
    return _answer(request, 500)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    message = "This form or request came without a valid CSRF token (or from another site). Reload and try again."
    return _answer(request, 403, message)
