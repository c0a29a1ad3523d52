"""Grade pages: the gradebook and its CSV export, one student's runs with feedback, leaderboards,
regrades and code similarity. Course staff only, except the leaderboards, which the course's students see."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from labs.courses import access, gradebook, grading, integrity, leaderboard, services
from labs.courses.services import CourseInputError
from labs.models import Assignment, Feedback, Regrade
from labs.models.course import Role
from labs.views.courses import assignment_or_404, course_or_404, require


@login_required
@require_GET
def gradebook_page(request: HttpRequest, slug: str) -> HttpResponse:
    course = course_or_404(request.user, slug)
    require(access.may_teach(course, request.user), "The gradebook is for the course's staff.")
    items = gradebook.items_of(course)
    context = {
        "course": course,
        "items": items,
        "rows": gradebook.rows(course, items),
        "formats": gradebook.LMS_FORMATS,
    }
    return render(request, "labs/courses/gradebook.html", context)


@login_required
@require_GET
def gradebook_csv(request: HttpRequest, slug: str, lms: str) -> HttpResponse:
    course = course_or_404(request.user, slug)
    require(access.may_teach(course, request.user), "The gradebook is for the course's staff.")
    if lms not in gradebook.LMS_FORMATS:
        raise Http404("Export formats: canvas, moodle.")
    response = HttpResponse(gradebook.export_csv(course, lms), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{course.slug}-{lms}.csv"'
    return response


def _student_or_404(assignment: Assignment, username: str) -> User:
    student = User.objects.filter(username=username).first()
    if student is None or access.role_in(assignment.course, student) != Role.STUDENT:
        raise Http404("No such student in this course.")
    return student


def _student_page(request, assignment: Assignment, student: User, error: str = "", status: int = 200) -> HttpResponse:
    dates = grading.dates_for(assignment, student)
    grades = [grading.grade(item, student, dates) for item in assignment.items.select_related("exercise", "assignment")]
    context = {
        "course": assignment.course,
        "assignment": assignment,
        "student": student,
        "dates": dates,
        "grades": grades,
        "feedback": Feedback.objects.filter(assignment=assignment, student=student).select_related("author"),
        "error": error,
    }
    return render(request, "labs/courses/student.html", context, status=status)


@login_required
def student_runs(request: HttpRequest, slug: str, assignment_slug: str, username: str) -> HttpResponse:
    """Every run of one student on the assignment, with its code, events and figures; POST: a feedback comment."""
    assignment = assignment_or_404(request.user, slug, assignment_slug)
    require(access.may_teach(assignment.course, request.user), "A student's runs are for the course's staff.")
    student = _student_or_404(assignment, username)
    if request.method == "POST":
        try:
            services.add_feedback(
                assignment, request.user, student, request.POST.get("text", ""), request.POST.get("submission")
            )
        except CourseInputError as exc:
            return _student_page(request, assignment, student, exc.message, 400)
        return redirect("labs:student_runs", slug, assignment_slug, username)
    return _student_page(request, assignment, student)


@login_required
@require_GET
def leaderboard_page(request: HttpRequest, slug: str, assignment_slug: str) -> HttpResponse:
    assignment = assignment_or_404(request.user, slug, assignment_slug)
    items = list(assignment.items.select_related("exercise", "assignment"))
    boards = [(item, leaderboard.exercise_board(item)) for item in items]
    context = {
        "course": assignment.course,
        "assignment": assignment,
        "overall": leaderboard.assignment_board(assignment),
        "boards": boards,
    }
    return render(request, "labs/courses/leaderboard.html", context)


@login_required
@require_POST
def regrade_start(request: HttpRequest, slug: str, assignment_slug: str) -> HttpResponse:
    assignment = assignment_or_404(request.user, slug, assignment_slug)
    require(access.may_run(assignment.course, request.user), "Only the course's instructors regrade.")
    regrade = services.start_regrade(assignment, request.user)
    return redirect("labs:regrade", slug, assignment_slug, regrade.pk)


@login_required
@require_GET
def regrade_page(request: HttpRequest, slug: str, assignment_slug: str, regrade_id: int) -> HttpResponse:
    """Each re-executed run: its score and device before and after, and the harness version it ran with."""
    assignment = assignment_or_404(request.user, slug, assignment_slug)
    require(access.may_teach(assignment.course, request.user), "Regrades are for the course's staff.")
    regrade = Regrade.objects.filter(assignment=assignment, pk=regrade_id).first()
    if regrade is None:
        raise Http404("No such regrade.")
    items = {i.exercise_id: i for i in assignment.items.select_related("exercise", "assignment")}
    rows = []
    for run in regrade.runs.select_related("original__owner", "original__exercise", "rerun"):
        item = items.get(run.original.exercise_id)
        now = None
        if item is not None and run.rerun.finished:
            now = grading.score_run(item, run.original, grading.dates_for(assignment, run.original.owner), run)
        rows.append({"run": run, "now": now, "changed": now is not None and now.score != run.old_score})
    context = {"course": assignment.course, "assignment": assignment, "regrade": regrade, "rows": rows}
    return render(request, "labs/courses/regrade.html", context)


@login_required
@require_GET
def integrity_page(request: HttpRequest, slug: str, assignment_slug: str) -> HttpResponse:
    assignment = assignment_or_404(request.user, slug, assignment_slug)
    require(access.may_teach(assignment.course, request.user), "Code similarity is for the course's staff.")
    found = [(item, integrity.pairs(item)) for item in assignment.items.select_related("exercise", "assignment")]
    return render(
        request, "labs/courses/integrity.html", {"course": assignment.course, "assignment": assignment, "found": found}
    )
