"""JSON API: submit a run, list one's runs, read one run, keep one's drafts, and the API's OpenAPI document.
Session auth with CSRF.

Bodies and parameters are validated in one place (`labs.api_input`); every refusal is
a JSON `{"error": message}` with a 4xx status, never a server error.
"""

from collections.abc import Callable
from functools import wraps
from uuid import UUID

from django.http import HttpRequest, JsonResponse

from labs import openapi
from labs.api_input import BadInput, draft_input, query_text, submission_input
from labs.models import Exercise, Submission
from labs.runs import drafts, services, visibility


def error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def api_view(*methods: str, login: bool = True) -> Callable:
    """Allow only `methods`, need a login (unless `login=False`), and answer `BadInput` as its 4xx: the API's one door.

    The view keeps its methods as `api_methods`, which the schema's test holds to the OpenAPI document.
    """

    def decorate(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> JsonResponse:
            if request.method not in methods:
                response = error(f"Use {' or '.join(methods)} here, not {request.method}.", 405)
                response["Allow"] = ", ".join(methods)
                return response
            if login and not request.user.is_authenticated:
                return error("Log in first.", 401)
            try:
                return view(request, *args, **kwargs)
            except BadInput as exc:
                return error(exc.message, exc.status)
            except services.SubmissionRejected as exc:
                return error(exc.message, exc.status)

        wrapper.api_methods = methods  # type: ignore[attr-defined]
        return wrapper

    return decorate


@api_view("GET", "POST")
def submissions(request: HttpRequest) -> JsonResponse:
    if request.method == "GET":
        mine = Submission.objects.filter(owner=request.user).select_related("exercise")
        if slug := query_text(request, "exercise"):
            mine = mine.filter(exercise__slug=slug)
        return JsonResponse({"submissions": [visibility.submission_state(s, with_events=False) for s in mine[:50]]})
    run = submission_input(request)
    submission = services.submit_run(
        request.user, run.exercise, run.language, run.source, block_size=run.block_size, sweep=run.sweep
    )
    return JsonResponse(visibility.submission_state(submission, with_events=False), status=201)


@api_view("GET")
def submission_detail(request: HttpRequest, submission_id: UUID) -> JsonResponse:
    submission = Submission.objects.select_related("exercise").filter(public_id=submission_id).first()
    if submission is None or not visibility.can_view(request.user, submission):
        return error("No such submission.", 404)
    state = visibility.submission_state(submission)
    return JsonResponse(visibility.state_for(state, visibility.sees_internals(request.user)))


@api_view("POST")
def submission_profile(request: HttpRequest, submission_id: UUID) -> JsonResponse:
    """Ask for the Nsight Compute report of an accepted GPU run (its owner, their course's staff, admins)."""
    submission = Submission.objects.select_related("exercise").filter(public_id=submission_id).first()
    if submission is None or not visibility.can_view(request.user, submission):
        return error("No such submission.", 404)
    if not services.request_profile(submission):
        profile = (submission.result or {}).get("profile")
        if profile:
            return JsonResponse({"profile": profile}, status=200)
        return error("Only an accepted run on a GPU can be profiled.", 409)
    return JsonResponse({"profile": submission.result["profile"]}, status=202)


@api_view("GET", "PUT")
def learner_drafts(request: HttpRequest) -> JsonResponse:
    """GET: one's drafts of an exercise, by language; PUT: keep the editor's text as one's draft."""
    if request.method == "GET":
        slug = query_text(request, "exercise")
        if not slug:
            raise BadInput("Say which exercise's drafts to read ('?exercise=<slug>').")
        exercise = Exercise.objects.visible_to(request.user).filter(slug=slug).first()
        if exercise is None:
            return error(f"There is no exercise called '{slug}'.", 404)
        return JsonResponse({"drafts": drafts.drafts_of(request.user, exercise)})
    draft = draft_input(request)
    saved = drafts.save_draft(request.user, draft.exercise, draft.language, draft.source)
    return JsonResponse(drafts.draft_state(saved))


@api_view("GET", login=False)
def openapi_document(request: HttpRequest) -> JsonResponse:
    """The OpenAPI 3 description of this API (public: it says what the API takes, nothing about anyone)."""
    return JsonResponse(openapi.document())
