"""JSON API: submit a run, list one's runs, read one run. Session auth with CSRF."""

import json

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET, require_http_methods

from labs import services, visibility
from labs.models import Submission


def _error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


@require_http_methods(["GET", "POST"])
def submissions(request: HttpRequest) -> JsonResponse:
    if not request.user.is_authenticated:
        return _error("Log in first.", 401)
    if request.method == "GET":
        mine = Submission.objects.filter(owner=request.user).select_related("exercise")
        if slug := request.GET.get("exercise"):
            mine = mine.filter(exercise__slug=slug)
        return JsonResponse({"submissions": [services.submission_state(s, with_events=False) for s in mine[:50]]})
    try:
        body = json.loads(request.body or b"")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _error("The request body is not valid JSON.", 400)
    if not isinstance(body, dict):
        return _error("The request body must be a JSON object with exercise, language and source.", 400)
    try:
        submission = services.submit_run(request.user, body.get("exercise"), body.get("language"), body.get("source"))
    except services.SubmissionRejected as exc:
        return _error(exc.message, exc.status)
    return JsonResponse(services.submission_state(submission, with_events=False), status=201)


@require_GET
def submission_detail(request: HttpRequest, submission_id: int) -> JsonResponse:
    if not request.user.is_authenticated:
        return _error("Log in first.", 401)
    submission = Submission.objects.select_related("exercise").filter(pk=submission_id).first()
    if submission is None or not services.can_view(request.user, submission):
        return _error("No such submission.", 404)
    state = services.submission_state(submission)
    return JsonResponse(visibility.state_for(state, visibility.sees_internals(request.user)))
