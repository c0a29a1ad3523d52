"""`manage.py create_demo_users` gives ./lab up a demo course: the instructor, a TA and the student enrolled and
an assignment; running it twice changes nothing."""

import io

import pytest
from django.core.management import call_command

from labs.models import Assignment, Course
from tests.labs.courses.factories import fast_passwords  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]


def test_the_demo_course_has_its_people_and_an_assignment_and_is_made_once(labs_loaded):
    out = io.StringIO()
    call_command("create_demo_users", password="pw", stdout=out)
    call_command("create_demo_users", password="pw", stdout=io.StringIO())
    course = Course.objects.get()
    roles = dict(course.memberships.values_list("user__username", "role"))
    assert roles == {"instructor": "instructor", "ta": "ta", "student": "student"}
    assignment = Assignment.objects.get(course=course)
    assert assignment.items.count() == 3 and assignment.release_at < assignment.due_at < assignment.close_at
    assert f"/courses/{course.slug}/" in out.getvalue()
