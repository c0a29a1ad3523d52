"""LTI 1.3 endpoints: OIDC login initiation, the launch, the tool's JWKS; and the instructor's LTI actions on a
course (link an LMS course, sync its roster) and an assignment (send its grades back)."""

from __future__ import annotations

from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from pylti1p3.contrib.django import DjangoMessageLaunch, DjangoOIDCLogin
from pylti1p3.contrib.django.launch_data_storage.cache import DjangoCacheDataStorage
from pylti1p3.exception import LtiException, LtiServiceException, OIDCException

from labs.courses import access, lti
from labs.courses.services import CourseInputError
from labs.models import LtiPlatform
from labs.views.courses import assignment_or_404, assignment_page, course_or_404, course_page, require

SESSION_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _refused(request: HttpRequest, message: str, status: int) -> HttpResponse:
    return render(request, "labs/courses/lti_error.html", {"message": message}, status=status)


def _storage() -> DjangoCacheDataStorage:
    # The launch comes back as a cross-site POST, which carries no SameSite=Lax session cookie: pylti1p3 keeps
    # the state and nonce in the cache under a cookie of its own instead.
    return DjangoCacheDataStorage(cache_name="default")


@csrf_exempt
@require_http_methods(["GET", "POST"])
def oidc_login(request: HttpRequest) -> HttpResponse:
    """The platform's third-party initiated login: redirect to its authorisation endpoint with state and nonce."""
    try:
        oidc = DjangoOIDCLogin(request, lti.tool_conf(), launch_data_storage=_storage())
        return oidc.redirect(request.build_absolute_uri(reverse("labs:lti_launch")))
    except (OIDCException, LtiException) as exc:
        return _refused(request, f"The LTI login could not start: {exc}", 400)


@csrf_exempt
@require_POST
def launch(request: HttpRequest) -> HttpResponse:
    """The platform posts a signed id_token: validate it, provision the user and open the assignment."""
    message = DjangoMessageLaunch(request, lti.tool_conf(), launch_data_storage=_storage())
    try:
        data = message.get_launch_data()
        launched = lti.record_launch(data)
    except LtiException as exc:
        return _refused(request, f"The LTI launch is not valid: {exc}", 400)
    except lti.LaunchRefused as exc:
        return _refused(request, str(exc), 403)
    login(request, launched.user, backend=SESSION_BACKEND)
    return redirect("labs:assignment", launched.assignment.course.slug, launched.assignment.slug)


@require_GET
def jwks(request: HttpRequest) -> JsonResponse:
    return JsonResponse(lti.jwks())


@login_required
@require_POST
def course_lti(request: HttpRequest, slug: str) -> HttpResponse:
    """Link an LMS course to this one, or enrol the roster the linked LMS courses list."""
    course = course_or_404(request.user, slug)
    require(access.may_run(course, request.user), "Only the course's instructors manage its LMS links.")
    try:
        if request.POST.get("action") == "sync":
            enrolled = lti.sync_roster(course, request.user)
            names = ", ".join(enrolled) or "nobody new"
            return course_page(request, course, lti_message=f"Enrolled from the LMS: {names}.")
        platform = LtiPlatform.objects.filter(pk=request.POST.get("platform") or 0).first()
        if platform is None:
            raise CourseInputError("Pick a registered LMS platform.", "platform")
        lti.link_context(course, request.user, platform, request.POST.get("context_id", ""))
    except CourseInputError as exc:
        return course_page(request, course, error=exc.message, status=400)
    except (LtiServiceException, LtiException, OSError) as exc:
        return course_page(request, course, error=f"The LMS did not answer as expected: {exc}", status=502)
    return redirect("labs:course", course.slug)


@login_required
@require_POST
def assignment_lti_grades(request: HttpRequest, slug: str, assignment_slug: str) -> HttpResponse:
    """Send each LMS student's total on this assignment back to the LMS's line item."""
    assignment = assignment_or_404(request.user, slug, assignment_slug)
    require(access.may_run(assignment.course, request.user), "Only the course's instructors send grades.")
    try:
        sent = lti.passback_grades(assignment, request.user)
    except (LtiServiceException, LtiException, OSError) as exc:
        return assignment_page(request, assignment, error=f"The LMS did not take the grades: {exc}", status=502)
    return assignment_page(request, assignment, lti_message=f"Sent {sent} grade(s) to the LMS.")
