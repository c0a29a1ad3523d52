"""An instructor creates a course, adds a TA and enrols students by join code and by CSV roster."""

import pytest
from django.core.exceptions import PermissionDenied

from labs.courses import access, services
from labs.courses.services import CourseInputError
from labs.models import Course, CourseGroup, Membership
from labs.models.course import Role
from tests.labs.courses.factories import fast_passwords, make_course, make_ta  # noqa: F401
from tests.labs.factories import client_for, make_instructor

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]


def test_an_instructor_creates_a_course_and_is_its_instructor(ian):
    course = services.create_course(ian, "GPU Programming")
    assert course.slug == "gpu-programming" and access.role_in(course, ian) == Role.INSTRUCTOR


def test_a_student_cannot_create_a_course(alice):
    with pytest.raises(PermissionDenied):
        services.create_course(alice, "Mine")


def test_a_student_joins_with_the_code_and_joining_twice_changes_nothing(ian, alice):
    course = make_course(ian)
    services.join_course(alice, course.join_code.lower())
    services.join_course(alice, course.join_code)
    membership = Membership.objects.get(course=course, user=alice)
    assert membership.role == Role.STUDENT and membership.pseudonym


def test_a_wrong_join_code_says_so(alice):
    with pytest.raises(CourseInputError, match="No course has that join code"):
        services.join_course(alice, "NOPE")


def test_a_roster_enrols_known_and_new_users_with_their_groups(ian, alice):
    course = make_course(ian)
    report = services.enrol_roster(
        course, ian, "username,email,first_name,last_name,group\nalice,a@x.org,Alice,A,s1\ncarol,c@x.org,Carol,C,s1\n"
    )
    assert report.enrolled == ["alice", "carol"] and report.created == ["carol"]
    assert sorted(CourseGroup.objects.get(course=course, name="s1").members.values_list("username", flat=True)) == [
        "alice",
        "carol",
    ]


@pytest.mark.parametrize(
    ("roster", "message"),
    [
        ("username,phone\nalice,1\n", "Line 1: unknown column 'phone'"),
        ("username\ncarol\ndave\nCarol\n", "Line 4: 'Carol' is already on line 2"),
        ("email\na@x.org\n", "Line 1: the roster needs a 'username' column"),
        ("username\ncarol\n\u00a0bad name\n", "Line 3"),
    ],
)
def test_a_bad_roster_names_its_line_and_enrols_nobody(ian, roster, message):
    course = make_course(ian)
    with pytest.raises(CourseInputError, match=message):
        services.enrol_roster(course, ian, roster)
    assert not Membership.objects.filter(course=course, role=Role.STUDENT).exists()
    assert not Membership.objects.filter(user__username="carol").exists()


def test_the_roster_page_shows_the_bad_line_with_a_400(ian):
    course = make_course(ian)
    response = client_for(ian).post(
        f"/courses/{course.slug}/people", {"action": "roster", "roster_text": "username,shoe\nx,1\n"}
    )
    assert response.status_code == 400 and "unknown column &#x27;shoe&#x27;" in response.content.decode()


def test_a_ta_is_added_and_teaches_but_does_not_run_the_course(ian):
    course = make_course(ian)
    tess = make_ta(course, ian)
    assert access.may_teach(course, tess) and not access.may_run(course, tess)
    with pytest.raises(PermissionDenied):
        services.add_staff(course, tess, "someone")


def test_each_person_sees_only_their_own_courses_and_an_admin_all(ian, alice, bob, ada):
    mine = make_course(ian, "Mine", students=(alice,))
    other = make_course(make_instructor("olga"), "Other", students=(bob,))
    assert list(access.courses_for(alice)) == [mine]
    assert list(access.courses_for(ian)) == [mine]
    assert set(access.courses_for(ada)) == {mine, other}
    page = client_for(alice).get("/courses/").content.decode()
    assert "Mine" in page and "Other" not in page


def test_joining_through_the_page_lands_on_the_course(ian, alice):
    course = make_course(ian)
    response = client_for(alice).post("/courses/", {"action": "join", "code": course.join_code})
    assert response.status_code == 302 and response["Location"] == f"/courses/{course.slug}/"
    assert Course.objects.get(pk=course.pk).memberships.filter(user=alice).exists()
