"""Who may see and do what in a course: read-only questions every course page and service asks.

Students see their own courses' released assignments; TAs teach (gradebook, feedback, integrity) in their own
courses; instructors also run them (people, assignments, overrides, regrades); admins may do everything.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.utils import timezone

from labs import accounts
from labs.models import Assignment, Course, Membership
from labs.models.course import Role


def is_admin(user: Any) -> bool:
    return bool(getattr(user, "is_superuser", False))


def role_in(course: Course, user: Any) -> str | None:
    if not getattr(user, "is_authenticated", False):
        return None
    return Membership.objects.filter(course=course, user=user).values_list("role", flat=True).first()


def may_create_course(user: Any) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    return is_admin(user) or user.groups.filter(name=accounts.INSTRUCTORS).exists()


def may_see(course: Course, user: Any) -> bool:
    return is_admin(user) or role_in(course, user) is not None


def may_teach(course: Course, user: Any) -> bool:
    """Staff of this course (TA or instructor) or an admin."""
    return is_admin(user) or role_in(course, user) in (Role.TA, Role.INSTRUCTOR)


def may_run(course: Course, user: Any) -> bool:
    """This course's instructors or an admin."""
    return is_admin(user) or role_in(course, user) == Role.INSTRUCTOR


def courses_for(user: Any) -> QuerySet[Course]:
    if is_admin(user):
        return Course.objects.all()
    return Course.objects.filter(memberships__user=user).distinct()


def students(course: Course) -> list[User]:
    return [
        m.user
        for m in Membership.objects.filter(course=course, role=Role.STUDENT)
        .select_related("user")
        .order_by("user__username")
    ]


def visible_assignments(course: Course, user: Any) -> QuerySet[Assignment]:
    """Staff see every assignment; students only released ones."""
    assignments = course.assignments.all()
    if may_teach(course, user):
        return assignments
    return assignments.filter(release_at__lte=timezone.now())


def may_see_assignment(assignment: Assignment, user: Any) -> bool:
    if may_teach(assignment.course, user):
        return True
    return role_in(assignment.course, user) == Role.STUDENT and assignment.release_at <= timezone.now()
