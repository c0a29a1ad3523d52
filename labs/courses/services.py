"""Every state change of courses: creating one, its people, assignments, overrides, feedback and regrades.

Each function checks who may do it (`labs.courses.access`) and validates its input whole before it writes,
inside one transaction, so bad input (a roster line, a date, a student not in the course) saves nothing and
is reported with the line or field it came from (`CourseInputError`).
"""

from __future__ import annotations

import csv
import io
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from labs import accounts
from labs.courses import access, grading
from labs.models import (
    Assignment,
    AssignmentExercise,
    Course,
    CourseGroup,
    Exercise,
    Feedback,
    Membership,
    Override,
    Regrade,
    RegradeRun,
    Submission,
)
from labs.models.course import BoardNames, BudgetPeriod, GradingBasis, GradingRule, Role, Selection
from labs.runs.services import submit_run

ROSTER_COLUMNS = ("username", "email", "first_name", "last_name", "group")
ADJECTIVES = ("amber", "brisk", "calm", "deft", "eager", "fleet", "keen", "lucid", "nimble", "swift", "vivid", "wary")
ANIMALS = ("otter", "heron", "lynx", "marten", "osprey", "panda", "quokka", "raven", "tapir", "wren", "yak", "zebu")


class CourseInputError(ValueError):
    """Bad input: a message naming the field or line; nothing was saved."""

    def __init__(self, message: str, field: str = ""):
        super().__init__(message)
        self.message, self.field = message, field


def _require(allowed: bool, what: str) -> None:
    if not allowed:
        raise PermissionDenied(what)


def _pseudonym(course: Course) -> str:
    taken = set(course.memberships.values_list("pseudonym", flat=True))
    for _ in range(50):
        name = f"{secrets.choice(ADJECTIVES)}-{secrets.choice(ANIMALS)}-{secrets.randbelow(100)}"
        if name not in taken:
            return name
    return f"student-{secrets.token_hex(4)}"


# --- courses and people --------------------------------------------------------------------------


@transaction.atomic
def create_course(actor: User, title: str, slug: str = "") -> Course:
    """An instructor (or admin) creates a course and becomes its first instructor."""
    _require(access.may_create_course(actor), "Only instructors create courses.")
    title = (title or "").strip()
    if not title:
        raise CourseInputError("A course needs a title.", "title")
    slug = slugify(slug or title)[:50]
    if not slug:
        raise CourseInputError("The course's short name must have letters or digits.", "slug")
    if Course.objects.filter(slug=slug).exists():
        raise CourseInputError(f"There is already a course called '{slug}'.", "slug")
    course = Course.objects.create(slug=slug, title=title, created_by=actor)
    Membership.objects.create(course=course, user=actor, role=Role.INSTRUCTOR)
    return course


def enrol_member(course: Course, user: User, role: str) -> Membership:
    membership = Membership.objects.filter(course=course, user=user).first()
    if membership is None:
        pseudonym = _pseudonym(course) if role == Role.STUDENT else ""
        return Membership.objects.create(course=course, user=user, role=role, pseudonym=pseudonym)
    if membership.role != role and role != Role.STUDENT:  # staff roles are promoted, never demoted by a roster
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def add_staff(course: Course, actor: User, username: str, role: str = Role.TA) -> Membership:
    """An instructor adds a teaching assistant or another instructor by username."""
    _require(access.may_run(course, actor), "Only the course's instructors add staff.")
    if role not in (Role.TA, Role.INSTRUCTOR):
        raise CourseInputError(f"Staff are TAs or instructors, not {role!r}.", "role")
    user = User.objects.filter(username=(username or "").strip()).first()
    if user is None:
        raise CourseInputError(f"There is no user called '{username}'.", "username")
    return enrol_member(course, user, role)


@transaction.atomic
def join_course(user: User, code: str) -> Membership:
    """A student enrols with the course's join code; joining twice changes nothing."""
    course = Course.objects.filter(join_code=(code or "").strip().upper()).first()
    if course is None:
        raise CourseInputError("No course has that join code.", "code")
    existing = Membership.objects.filter(course=course, user=user).first()
    return existing or enrol_member(course, user, Role.STUDENT)


@dataclass
class RosterReport:
    enrolled: list[str]
    created: list[str]
    already: list[str]


def _parse_roster(text: str) -> list[tuple[int, dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = [(h or "").strip() for h in (reader.fieldnames or [])]
    if "username" not in header:
        raise CourseInputError("Line 1: the roster needs a 'username' column.", "roster")
    unknown = [h for h in header if h not in ROSTER_COLUMNS]
    if unknown:
        allowed = ", ".join(ROSTER_COLUMNS)
        raise CourseInputError(f"Line 1: unknown column {unknown[0]!r}; the columns are {allowed}.", "roster")
    reader.fieldnames = header
    rows, seen = [], {}
    for row in reader:
        line = reader.line_num
        if None in row:
            raise CourseInputError(f"Line {line}: more values than columns.", "roster")
        values = {k: (v or "").strip() for k, v in row.items()}
        name = values.get("username", "")
        if not name:
            raise CourseInputError(f"Line {line}: the username is empty.", "roster")
        if not re.fullmatch(r"[\w.@+-]{1,150}", name):
            raise CourseInputError(f"Line {line}: {name!r} is not a valid username.", "roster")
        if name.lower() in seen:
            raise CourseInputError(f"Line {line}: {name!r} is already on line {seen[name.lower()]}.", "roster")
        seen[name.lower()] = line
        rows.append((line, values))
    if not rows:
        raise CourseInputError("The roster has no students.", "roster")
    return rows


@transaction.atomic
def enrol_roster(course: Course, actor: User, text: str) -> RosterReport:
    """Enrol every student of a CSV roster (columns: username, email, first_name, last_name, group).

    Unknown users are created without a password (the course page then shows each an invitation to set one,
    `labs.accounts.invite`, and LTI launches need none); a whole roster
    is enrolled or, on any bad line, none of it.
    """
    _require(access.may_run(course, actor), "Only the course's instructors enrol a roster.")
    report = RosterReport([], [], [])
    for line, values in _parse_roster(text):
        name = values["username"]
        user = User.objects.filter(username__iexact=name).first()
        if user is None:
            user = User(username=name)
            user.set_unusable_password()
            report.created.append(name)
        for key in ("email", "first_name", "last_name"):
            if values.get(key):
                setattr(user, key, values[key])
        user.save()
        user.groups.add(accounts.ensure_roles()[accounts.STUDENTS])
        existing = Membership.objects.filter(course=course, user=user).first()
        if existing is not None and existing.role != Role.STUDENT:
            raise CourseInputError(f"Line {line}: {name!r} is on the course's staff, not a student.", "roster")
        (report.already if existing else report.enrolled).append(name)
        enrol_member(course, user, Role.STUDENT)
        if group_name := values.get("group"):
            group, _ = CourseGroup.objects.get_or_create(course=course, name=group_name)
            group.members.add(user)
    return report


@transaction.atomic
def set_group(course: Course, actor: User, name: str, usernames: list[str]) -> CourseGroup:
    """Create or refill a group of the course's students."""
    _require(access.may_run(course, actor), "Only the course's instructors manage groups.")
    name = (name or "").strip()
    if not name:
        raise CourseInputError("A group needs a name.", "name")
    students = _students(course, usernames, "members")
    group, _ = CourseGroup.objects.get_or_create(course=course, name=name)
    group.members.set(students)
    return group


def _students(course: Course, usernames: list[str], field: str) -> list[User]:
    found = []
    for name in usernames:
        membership = (
            Membership.objects.filter(course=course, user__username=name, role=Role.STUDENT)
            .select_related("user")
            .first()
        )
        if membership is None:
            raise CourseInputError(f"'{name}' is not a student of {course.title}.", field)
        found.append(membership.user)
    return found


@transaction.atomic
def set_board_names(course: Course, actor: User, names: str) -> None:
    _require(access.may_run(course, actor), "Only the course's instructors choose how boards name people.")
    if names not in BoardNames.values:
        raise CourseInputError(f"Leaderboard names are {' or '.join(BoardNames.values)}.", "board_names")
    Course.objects.filter(pk=course.pk).update(board_names=names)


def _seconds(value: Any, what: str, field: str) -> int | None:
    """A whole number of GPU-seconds from a form, or None for a blank (no cap)."""
    text = str(value if value is not None else "").strip()
    if not text:
        return None
    if not text.isdigit() or len(text) > 9:
        raise CourseInputError(f"{what} is a whole number of GPU-seconds (or blank for no cap); got {text!r}.", field)
    return int(text)


def set_gpu_budget(course: Course, actor: User, period: str, per_student: Any, for_course: Any) -> None:
    """The instructors' GPU-time budgets: each student's and all the students' together, a day or a week
    (`labs.fleet.budgets` enforces them); the course's may not pass the ceiling an admin set."""
    _require(access.may_run(course, actor), "Only the course's instructors set its GPU time.")
    if period not in BudgetPeriod.values:
        raise CourseInputError(f"A GPU-time budget is for {' or '.join(BudgetPeriod.values)}.", "gpu_period")
    student = _seconds(per_student, "Each student's GPU time", "gpu_seconds_per_student")
    together = _seconds(for_course, "The course's GPU time", "gpu_seconds_for_course")
    ceiling = course.gpu_seconds_ceiling
    if ceiling is not None and together is not None and together > ceiling:
        raise CourseInputError(
            f"The admins cap this course at {ceiling} GPU-seconds a {period}; ask them to raise it.",
            "gpu_seconds_for_course",
        )
    limit = min((c for c in (together, ceiling) if c is not None), default=None)
    if student is not None and limit is not None and student > limit:
        raise CourseInputError(
            f"Each student's {student} GPU-seconds is more than the course's {limit}.", "gpu_seconds_per_student"
        )
    Course.objects.filter(pk=course.pk).update(
        gpu_period=period, gpu_seconds_per_student=student, gpu_seconds_for_course=together
    )


def set_gpu_ceiling(course: Course, actor: User, ceiling: Any) -> None:
    """An admin's ceiling on what a course's students together may spend a period (blank: none)."""
    if not access.is_admin(actor):
        raise PermissionDenied("Only admins set a course's GPU-time ceiling.")
    Course.objects.filter(pk=course.pk).update(
        gpu_seconds_ceiling=_seconds(ceiling, "The ceiling", "gpu_seconds_ceiling")
    )


# --- assignments ---------------------------------------------------------------------------------


@dataclass
class ItemSpec:
    exercise: str  # slug
    points: float = 10.0
    goal: float = 0.8


def _late_curve(raw: Any) -> list[float]:
    values = raw if isinstance(raw, list) else [v for v in str(raw or "").replace(";", ",").split(",") if v.strip()]
    curve = []
    for n, value in enumerate(values, start=1):
        try:
            credit = float(value)
        except (TypeError, ValueError):
            raise CourseInputError(f"Late credit for day {n} is not a number: {value!r}.", "late_credit") from None
        if not 0 <= credit <= 1:
            raise CourseInputError(f"Late credit for day {n} must be between 0 and 1, not {credit}.", "late_credit")
        curve.append(credit)
    return curve


def _check_dates(release_at: datetime | None, due_at: datetime | None, close_at: datetime | None) -> None:
    for field, value in (("release_at", release_at), ("due_at", due_at), ("close_at", close_at)):
        if value is None:
            raise CourseInputError(f"The {field.replace('_at', '')} date is missing.", field)
    assert release_at and due_at and close_at
    if due_at < release_at:
        raise CourseInputError("The due date is before the release date.", "due_at")
    if close_at < due_at:
        raise CourseInputError("The hard close is before the due date.", "close_at")


@transaction.atomic
def create_assignment(
    course: Course,
    actor: User,
    *,
    title: str,
    release_at: datetime | None,
    due_at: datetime | None,
    close_at: datetime | None = None,
    items: list[ItemSpec],
    late_credit: Any = (),
    practice_after_close: bool = True,
    grading_basis: str = GradingBasis.PERFORMANCE,
    rule: str = GradingRule.ROOF,
    selection: str = Selection.BEST,
    correctness_weight: float = 0.5,
    slug: str = "",
) -> Assignment:
    """An assignment of the course's exercises with its dates, late curve and grading rule."""
    _require(access.may_run(course, actor), "Only the course's instructors create assignments.")
    title = (title or "").strip()
    if not title:
        raise CourseInputError("An assignment needs a title.", "title")
    close_at = close_at or due_at
    _check_dates(release_at, due_at, close_at)
    slug = slugify(slug or title)[:50]
    if not slug or Assignment.objects.filter(course=course, slug=slug).exists():
        raise CourseInputError(f"The course already has an assignment called '{slug}'.", "slug")
    _check_basis(grading_basis)
    if rule not in GradingRule.values:
        raise CourseInputError(f"The grading rule is {' or '.join(GradingRule.values)}.", "rule")
    if selection not in Selection.values:
        raise CourseInputError(f"The counted run is {' or '.join(Selection.values)}.", "selection")
    if not 0 <= correctness_weight <= 1:
        raise CourseInputError("The correctness share must be between 0 and 1.", "correctness_weight")
    if not items:
        raise CourseInputError("Pick at least one exercise.", "exercises")
    curve = _late_curve(list(late_credit) if isinstance(late_credit, tuple) else late_credit)
    assignment = Assignment.objects.create(
        course=course,
        slug=slug,
        title=title,
        release_at=release_at,
        due_at=due_at,
        close_at=close_at,
        late_credit=curve,
        practice_after_close=practice_after_close,
        grading_basis=grading_basis,
        rule=rule,
        selection=selection,
        correctness_weight=correctness_weight,
    )
    for order, item in enumerate(items):
        exercise = Exercise.objects.for_course(course).filter(slug=item.exercise).first()
        if exercise is None:
            raise CourseInputError(f"There is no exercise called '{item.exercise}'.", "exercises")
        if item.points <= 0 or item.goal <= 0:
            raise CourseInputError(f"{exercise.title}: points and goal must be above 0.", "exercises")
        AssignmentExercise.objects.create(
            assignment=assignment, exercise=exercise, order=order, points=item.points, goal=item.goal
        )
    return assignment


@transaction.atomic
def _check_basis(basis: str) -> None:
    if basis not in GradingBasis.values:
        raise CourseInputError(f"The grading basis is {' or '.join(GradingBasis.values)}.", "grading_basis")


def set_grading_basis(assignment: Assignment, actor: User, basis: str) -> None:
    """Grade the assignment on correctness or on performance from now on; grades follow, as they are computed."""
    _require(access.may_run(assignment.course, actor), "Only the course's instructors change what is graded.")
    _check_basis(basis)
    Assignment.objects.filter(pk=assignment.pk).update(grading_basis=basis)
    assignment.grading_basis = basis


def set_override(
    assignment: Assignment,
    actor: User,
    *,
    due_at: datetime | None,
    close_at: datetime | None = None,
    student: str = "",
    group: str = "",
) -> Override:
    """An extension for one student or one of the course's groups (see `labs.models.course.Override`).

    A due date alone moves the hard close only later: to the new due date when that is past the assignment's
    close, else the assignment's own close holds. A hard close given explicitly is taken as given.
    """
    course = assignment.course
    _require(access.may_run(course, actor), "Only the course's instructors grant extensions.")
    if bool(student) == bool(group):
        raise CourseInputError("An override names one student or one group.", "student")
    if close_at is None and due_at is not None:
        close_at = max(due_at, assignment.close_at)
    _check_dates(assignment.release_at, due_at, close_at)
    target: dict[str, Any] = {}
    if student:
        target["student"] = _students(course, [student.strip()], "student")[0]
    else:
        found = CourseGroup.objects.filter(course=course, name=group.strip()).first()
        if found is None:
            raise CourseInputError(f"{course.title} has no group called '{group}'.", "group")
        target["group"] = found
    override, _ = Override.objects.update_or_create(
        assignment=assignment, **target, defaults={"due_at": due_at, "close_at": close_at}
    )
    return override


@transaction.atomic
def add_feedback(assignment: Assignment, actor: User, student: User, text: str, submission_id: Any = None) -> Feedback:
    """A comment from the course's staff to one student."""
    _require(access.may_teach(assignment.course, actor), "Only the course's staff give feedback.")
    if access.role_in(assignment.course, student) != Role.STUDENT:
        raise CourseInputError(f"{student.get_username()} is not a student of this course.", "student")
    text = (text or "").strip()
    if not text:
        raise CourseInputError("The comment is empty.", "text")
    submission = None
    if submission_id:
        submission = Submission.objects.filter(pk=submission_id, owner=student).first()
        if submission is None:
            raise CourseInputError("That run is not this student's.", "submission")
    return Feedback.objects.create(
        assignment=assignment, student=student, author=actor, submission=submission, text=text[:10000]
    )


# --- demo ------------------------------------------------------------------------------------------


DEMO_COURSE = "demo-gpu-course"
DEMO_EXERCISES = ("vector-add", "coalescing", "transpose")


@transaction.atomic
def ensure_demo_course(instructor: User, ta: User, student: User) -> Course:
    """The demo course: the instructor, a TA, the student enrolled, and an assignment of the first exercises.

    Running it again leaves the course and its assignment as they are (the dates are set once).
    """
    course = Course.objects.filter(slug=DEMO_COURSE).first()
    if course is None:
        course = Course.objects.create(slug=DEMO_COURSE, title="GPU Programming (demo)", created_by=instructor)
    enrol_member(course, instructor, Role.INSTRUCTOR)
    enrol_member(course, ta, Role.TA)
    enrol_member(course, student, Role.STUDENT)
    slugs = [s for s in DEMO_EXERCISES if Exercise.objects.filter(slug=s, published=True).exists()]
    if slugs and not course.assignments.exists():
        now = timezone.now()
        create_assignment(
            course,
            instructor,
            title="Memory-bound kernels",
            release_at=now - timedelta(days=1),
            due_at=now + timedelta(days=7),
            close_at=now + timedelta(days=10),
            items=[ItemSpec(slug) for slug in slugs],
            late_credit=[0.8, 0.6, 0.4],
        )
    return course


# --- regrades ------------------------------------------------------------------------------------


def start_regrade(assignment: Assignment, actor: User) -> Regrade:
    """Re-execute every student's counted run of every exercise through the normal submit path.

    Each re-execution is a new run of the student's code on the queue the original ran on (so the same GPU
    class); it records the harness version it ran with and the score and device before, so the regrade page
    shows what changed. Grades then score the original's submission time with the re-execution's measurements.
    """
    _require(access.may_run(assignment.course, actor), "Only the course's instructors regrade.")
    chosen = []
    for student in access.students(assignment.course):
        for item in assignment.items.select_related("exercise"):
            counted = grading.grade(item, student).counted
            if counted is not None:
                chosen.append((item, counted))
    with transaction.atomic():
        regrade = Regrade.objects.create(assignment=assignment, requested_by=actor)
        for item, scored in chosen:
            original = scored.submission
            rerun = submit_run(
                original.owner,
                item.exercise.slug,
                original.language,
                original.source,
                queue=original.queue,
                rate_limited=False,
                launch=original.launch,
            )
            RegradeRun.objects.create(
                regrade=regrade,
                original=original,
                rerun=rerun,
                harness_version=item.exercise.version,
                old_score=scored.score,
                old_device=scored.device,
            )
    return regrade
