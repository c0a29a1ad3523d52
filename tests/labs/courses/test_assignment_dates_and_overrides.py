"""Assignments: dates checked whole, extensions with their precedence, samples revealed after the due date."""

from datetime import timedelta

import pytest
from django.utils import timezone

from labs.courses import grading, services
from labs.courses.services import CourseInputError, ItemSpec
from labs.models import Assignment, Override
from tests.labs.courses.factories import fast_passwords, make_assignment, make_course  # noqa: F401
from tests.labs.factories import client_for, make_student

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]


@pytest.fixture
def course(ian, alice, bob, labs_loaded):
    return make_course(ian, students=(alice, bob))


def test_a_due_date_before_the_release_is_refused_naming_the_field_and_saves_nothing(course, ian):
    now = timezone.now()
    with pytest.raises(CourseInputError, match="due date is before the release") as caught:
        services.create_assignment(
            course, ian, title="A1", release_at=now, due_at=now - timedelta(days=1), items=[ItemSpec("vector-add")]
        )
    assert caught.value.field == "due_at" and not Assignment.objects.exists()


def test_an_unknown_exercise_saves_no_half_assignment(course, ian):
    now = timezone.now()
    with pytest.raises(CourseInputError, match="no exercise called 'nope'"):
        services.create_assignment(
            course,
            ian,
            title="A1",
            release_at=now,
            due_at=now + timedelta(days=1),
            items=[ItemSpec("vector-add"), ItemSpec("nope")],
        )
    assert not Assignment.objects.exists()


def test_the_form_shows_a_bad_late_curve_with_a_400(course, ian):
    response = client_for(ian).post(
        f"/courses/{course.slug}/assignments/new",
        {
            "title": "A1",
            "release_at": "2026-01-01T00:00",
            "due_at": "2026-01-08T00:00",
            "late_credit": "0.9, lots",
            "exercise": ["vector-add"],
        },
    )
    assert response.status_code == 400 and "Late credit for day 2 is not a number" in response.content.decode()


def test_an_override_for_someone_not_in_the_course_is_refused(course, ian):
    make_student("mallory")
    assignment = make_assignment(course, ian)
    with pytest.raises(CourseInputError, match="'mallory' is not a student"):
        services.set_override(assignment, ian, student="mallory", due_at=timezone.now())
    assert not Override.objects.exists()


def test_a_students_own_override_wins_over_their_groups_and_groups_take_the_latest(course, ian, alice, bob):
    assignment = make_assignment(course, ian)
    due = assignment.due_at
    services.set_group(course, ian, "s1", ["alice", "bob"])
    services.set_group(course, ian, "s2", ["bob"])
    services.set_override(assignment, ian, group="s1", due_at=due + timedelta(days=2))
    services.set_override(assignment, ian, group="s2", due_at=due + timedelta(days=4))
    services.set_override(assignment, ian, student="alice", due_at=due + timedelta(days=1))
    assert grading.dates_for(assignment, alice).due_at == due + timedelta(days=1)
    bobs = grading.dates_for(assignment, bob)
    assert bobs.due_at == due + timedelta(days=4) and bobs.source == "group override (s2)"


def test_sample_tests_are_hidden_until_the_due_date_and_then_shown(course, ian, alice):
    open_one = make_assignment(course, ian, title="Open")
    past = make_assignment(course, ian, title="Past", released=timedelta(days=9), due_in=-timedelta(days=1))
    page = client_for(alice).get(f"/courses/{course.slug}/a/{open_one.slug}/").content.decode()
    assert 'id="samples"' not in page
    page = client_for(alice).get(f"/courses/{course.slug}/a/{past.slug}/").content.decode()
    assert 'id="samples"' in page and 'data-case="syntax-error-numba"' in page


def test_a_student_does_not_see_an_unreleased_assignment(course, ian, alice):
    later = make_assignment(course, ian, released=-timedelta(days=1))
    assert client_for(alice).get(f"/courses/{course.slug}/a/{later.slug}/").status_code == 404
    assert client_for(ian).get(f"/courses/{course.slug}/a/{later.slug}/").status_code == 200


def test_a_group_extension_of_the_due_date_alone_keeps_the_assignments_hard_close(course, ian, alice):
    assignment = make_assignment(course, ian, close_after_due=timedelta(days=3))
    services.set_group(course, ian, "s1", ["alice"])
    when = (assignment.due_at + timedelta(days=1)).replace(second=0, microsecond=0)
    response = client_for(ian).post(
        f"/courses/{course.slug}/a/{assignment.slug}/overrides",
        {"group": "s1", "due_at": when.strftime("%Y-%m-%dT%H:%M")},
    )
    assert response.status_code == 302
    alices = grading.dates_for(assignment, alice)
    assert alices.due_at == when and alices.close_at == assignment.close_at  # not pulled in to the new due date


def test_a_due_date_past_the_hard_close_carries_the_close_with_it(course, ian, alice):
    assignment = make_assignment(course, ian, close_after_due=timedelta(days=3))
    later = assignment.close_at + timedelta(days=2)
    override = services.set_override(assignment, ian, student="alice", due_at=later)
    assert override.due_at == later and override.close_at == later


def test_a_hard_close_given_with_the_extension_is_taken_as_given(course, ian, alice):
    assignment = make_assignment(course, ian, close_after_due=timedelta(days=3))
    due, close = assignment.due_at + timedelta(days=1), assignment.due_at + timedelta(days=2)
    services.set_override(assignment, ian, student="alice", due_at=due, close_at=close)
    assert grading.dates_for(assignment, alice).close_at == close


def test_the_extension_form_says_what_each_field_changes(course, ian):
    assignment = make_assignment(course, ian)
    page = client_for(ian).get(f"/courses/{course.slug}/a/{assignment.slug}/").content.decode()
    assert 'aria-describedby="o-due-help"' in page and 'aria-describedby="o-close-help"' in page
    assert "Changes the due date: late credit counts from it" in page
    assert "Changes the hard close: no run after it counts" in page and "never earlier" in page
