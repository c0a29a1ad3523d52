"""Course pages: my courses, one course (people, groups, assignments), one assignment, and their forms.

A course is invisible (404) to whoever is not in it; a member without the role a change needs gets 403.
Every change goes through `labs.courses.services`; its `CourseInputError` is shown on the page with a 400.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_GET, require_POST

from gpu_worker.exercise.labspec import LabError, find_lab
from labs import accounts
from labs.courses import access, grading, services
from labs.courses.services import CourseInputError, ItemSpec
from labs.fleet import budgets
from labs.models import Assignment, Course, Exercise, Feedback, LtiPlatform
from labs.models.course import BoardNames, BudgetPeriod, GradingBasis, GradingRule, Role, Selection


def course_or_404(user: Any, slug: str) -> Course:
    course = Course.objects.filter(slug=slug).first()
    if course is None or not access.may_see(course, user):
        raise Http404("No such course.")
    return course


def assignment_or_404(user: Any, slug: str, assignment_slug: str) -> Assignment:
    course = course_or_404(user, slug)
    assignment = Assignment.objects.filter(course=course, slug=assignment_slug).select_related("course").first()
    if assignment is None or not access.may_see_assignment(assignment, user):
        raise Http404("No such assignment.")
    return assignment


def require(allowed: bool, why: str) -> None:
    if not allowed:
        raise PermissionDenied(why)


def parse_when(raw: str | None, field: str) -> datetime | None:
    """A datetime-local value (UTC, the site's time zone); None when blank."""
    if not raw:
        return None
    value = parse_datetime(raw.strip())
    if value is None:
        raise CourseInputError(f"The {field.replace('_at', '')} date {raw!r} is not a date and time.", field)
    return timezone.make_aware(value) if timezone.is_naive(value) else value


def _number(raw: str | None, field: str, default: float) -> float:
    if raw in (None, ""):
        return default
    try:
        return float(raw)
    except ValueError:
        raise CourseInputError(f"{field}: {raw!r} is not a number.", field) from None


# --- my courses ----------------------------------------------------------------------------------


@login_required
def course_list(request: HttpRequest) -> HttpResponse:
    error, status = "", 200
    if request.method == "POST":
        try:
            if request.POST.get("action") == "join":
                membership = services.join_course(request.user, request.POST.get("code", ""))
                return redirect("labs:course", membership.course.slug)
            course = services.create_course(request.user, request.POST.get("title", ""), "")
            return redirect("labs:course", course.slug)
        except CourseInputError as exc:
            error, status = exc.message, 400
    context = {
        "courses": access.courses_for(request.user),
        "may_create": access.may_create_course(request.user),
        "error": error,
    }
    return render(request, "labs/courses/list.html", context, status=status)


# --- one course ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MyAssignment:
    """One assignment as a student sees it on the course page: their own dates and the feedback left for them."""

    assignment: Assignment
    dates: grading.Dates
    feedback: list[Feedback]


BUDGET_FIELDS = ("gpu_period", "gpu_seconds_per_student", "gpu_seconds_for_course")


def _mine(course: Course, user: Any, assignments: Iterable[Assignment]) -> list[MyAssignment]:
    feedback: dict[int, list[Feedback]] = {}
    for f in Feedback.objects.filter(assignment__course=course, student=user).select_related("author"):
        feedback.setdefault(f.assignment_id, []).append(f)
    return [MyAssignment(a, grading.dates_for(a, user), feedback.get(a.pk, [])) for a in assignments]


def course_page(request: HttpRequest, course: Course, error: str = "", status: int = 200, **extra) -> HttpResponse:
    user = request.user
    teaching = access.may_teach(course, user)
    assignments = access.visible_assignments(course, user)
    context = {
        "course": course,
        "role": access.role_in(course, user) or ("admin" if access.is_admin(user) else None),
        "teaching": teaching,
        "running": access.may_run(course, user),
        "assignments": assignments,
        "mine": _mine(course, user, assignments) if access.role_in(course, user) == Role.STUDENT else [],
        "memberships": course.memberships.select_related("user") if teaching else [],
        "groups": course.groups.prefetch_related("members") if teaching else [],
        "board_choices": BoardNames.choices,
        "lti_platforms": LtiPlatform.objects.all() if access.may_run(course, user) else [],
        "lti_contexts": course.lti_contexts.select_related("platform") if teaching else [],
        "is_admin": access.is_admin(user),
        "gpu_spend": budgets.spend_of(course) if teaching else None,
        "gpu_periods": BudgetPeriod.choices,
        "budget_form": {f: getattr(course, f) for f in BUDGET_FIELDS},
        "my_gpu": [b for b in budgets.budgets_for(user) if b.course_pk == course.pk] if not teaching else [],
        "error": error,
        **extra,
    }
    return render(request, "labs/courses/course.html", context, status=status)


@login_required
@require_GET
def course_detail(request: HttpRequest, slug: str) -> HttpResponse:
    return course_page(request, course_or_404(request.user, slug))


@login_required
def course_people(request: HttpRequest, slug: str) -> HttpResponse:
    """Add staff, enrol a CSV roster, fill a group or choose how boards name students (GET: the course page)."""
    course = course_or_404(request.user, slug)
    if request.method != "POST":
        return redirect("labs:course", course.slug)
    require(access.may_run(course, request.user), "Only the course's instructors change its people.")
    action = request.POST.get("action")
    try:
        if action == "staff":
            services.add_staff(course, request.user, request.POST.get("username", ""), Role.TA)
        elif action == "roster":
            upload = request.FILES.get("roster")
            text = upload.read().decode("utf-8", errors="replace") if upload else request.POST.get("roster_text", "")
            report = services.enrol_roster(course, request.user, text)
            created = User.objects.filter(username__in=report.created).order_by("username")
            invitations = accounts.invite(created, request.build_absolute_uri, request.user.get_username())
            return course_page(request, course, roster_report=report, invitations=invitations)
        elif action == "group":
            names = [n.strip() for n in request.POST.get("members", "").replace("\n", ",").split(",") if n.strip()]
            services.set_group(course, request.user, request.POST.get("name", ""), names)
        elif action == "board_names":
            services.set_board_names(course, request.user, request.POST.get("board_names", ""))
        elif action == "gpu_budget":
            post = request.POST
            services.set_gpu_budget(
                course,
                request.user,
                post.get("gpu_period", ""),
                post.get("gpu_seconds_per_student"),
                post.get("gpu_seconds_for_course"),
            )
        elif action == "gpu_ceiling":
            services.set_gpu_ceiling(course, request.user, request.POST.get("gpu_seconds_ceiling"))
        else:
            raise CourseInputError(f"Unknown action {action!r}.", "action")
    except CourseInputError as exc:
        again = {"budget_form": request.POST} if action == "gpu_budget" else {}  # the form again, as it was sent
        return course_page(request, course, error=exc.message, status=400, **again)
    return redirect("labs:course", course.slug)


# --- assignments ---------------------------------------------------------------------------------


def _assignment_form(request: HttpRequest, course: Course, error: str = "", status: int = 200) -> HttpResponse:
    context = {
        "course": course,
        "exercises": Exercise.objects.for_course(course).select_related("module"),
        "rules": GradingRule.choices,
        "bases": GradingBasis.choices,
        "selections": Selection.choices,
        "values": request.POST,
        "error": error,
    }
    return render(request, "labs/courses/assignment_form.html", context, status=status)


@login_required
def assignment_new(request: HttpRequest, slug: str) -> HttpResponse:
    course = course_or_404(request.user, slug)
    require(access.may_run(course, request.user), "Only the course's instructors create assignments.")
    if request.method != "POST":
        return _assignment_form(request, course)
    post = request.POST
    try:
        items = [
            ItemSpec(
                exercise=s,
                points=_number(post.get(f"points_{s}"), f"points_{s}", 10.0),
                goal=_number(post.get(f"goal_{s}"), f"goal_{s}", 0.8),
            )
            for s in post.getlist("exercise")
        ]
        assignment = services.create_assignment(
            course,
            request.user,
            title=post.get("title", ""),
            release_at=parse_when(post.get("release_at"), "release_at"),
            due_at=parse_when(post.get("due_at"), "due_at"),
            close_at=parse_when(post.get("close_at"), "close_at"),
            items=items,
            late_credit=post.get("late_credit", ""),
            practice_after_close=post.get("practice_after_close") == "on",
            grading_basis=post.get("grading_basis", GradingBasis.PERFORMANCE),
            rule=post.get("rule", GradingRule.ROOF),
            selection=post.get("selection", Selection.BEST),
            correctness_weight=_number(post.get("correctness_weight"), "correctness_weight", 0.5),
        )
    except CourseInputError as exc:
        return _assignment_form(request, course, error=exc.message, status=400)
    return redirect("labs:assignment", course.slug, assignment.slug)


def _samples(assignment: Assignment, dates: grading.Dates) -> dict[str, list]:
    """The exercises' hidden sample cases, once the due date (the student's own) has passed."""
    if timezone.now() < dates.due_at:
        return {}
    shown = {}
    for item in assignment.items.select_related("exercise"):
        try:
            cases = find_lab(item.exercise.slug).cases
        except (LabError, FileNotFoundError, KeyError):
            continue
        shown[item.exercise.slug] = [c for c in cases if not c.name.startswith("reference-")]
    return shown


def assignment_page(
    request: HttpRequest, assignment: Assignment, error: str = "", status: int = 200, **extra
) -> HttpResponse:
    user = request.user
    course = assignment.course
    teaching = access.may_teach(course, user)
    items = list(assignment.items.select_related("exercise", "assignment"))
    student = access.role_in(course, user) == Role.STUDENT
    dates = (
        grading.dates_for(assignment, user)
        if student
        else grading.Dates(assignment.release_at, assignment.due_at, assignment.close_at, "assignment")
    )
    context = {
        "course": course,
        "assignment": assignment,
        "items": items,
        "teaching": teaching,
        "running": access.may_run(course, user),
        "dates": dates,
        "now": timezone.now(),
        "grades": [grading.grade(item, user, dates) for item in items] if student else [],
        "samples": _samples(assignment, dates) if student or teaching else {},
        "overrides": assignment.overrides.select_related("student", "group") if teaching else [],
        "feedback": Feedback.objects.filter(assignment=assignment, student=user) if student else [],
        "lti_links": assignment.lti_links.count() if teaching else 0,
        "bases": GradingBasis.choices,
        "error": error,
        **extra,
    }
    return render(request, "labs/courses/assignment.html", context, status=status)


@login_required
@require_GET
def assignment_detail(request: HttpRequest, slug: str, assignment_slug: str) -> HttpResponse:
    return assignment_page(request, assignment_or_404(request.user, slug, assignment_slug))


def _assignment_change(
    request: HttpRequest, slug: str, assignment_slug: str, refused: str, change: Callable[[Assignment], Any]
) -> HttpResponse:
    """An instructor's change to an assignment: the page again with the error (400), or back to it once made."""
    assignment = assignment_or_404(request.user, slug, assignment_slug)
    require(access.may_run(assignment.course, request.user), refused)
    try:
        change(assignment)
    except CourseInputError as exc:
        return assignment_page(request, assignment, error=exc.message, status=400)
    return redirect("labs:assignment", assignment.course.slug, assignment.slug)


@login_required
@require_POST
def assignment_override(request: HttpRequest, slug: str, assignment_slug: str) -> HttpResponse:
    post = request.POST

    def grant(assignment: Assignment) -> None:
        services.set_override(
            assignment,
            request.user,
            student=post.get("student", "").strip(),
            group=post.get("group", "").strip(),
            due_at=parse_when(post.get("due_at"), "due_at"),
            close_at=parse_when(post.get("close_at"), "close_at"),
        )

    return _assignment_change(request, slug, assignment_slug, "Only the course's instructors grant extensions.", grant)


@login_required
@require_POST
def assignment_basis(request: HttpRequest, slug: str, assignment_slug: str) -> HttpResponse:
    """Grade the assignment on correctness or on performance (`labs.courses.grading.not_counted_reason`)."""
    basis = request.POST.get("grading_basis", "")
    return _assignment_change(
        request,
        slug,
        assignment_slug,
        "Only the course's instructors change what is graded.",
        lambda assignment: services.set_grading_basis(assignment, request.user, basis),
    )
