"""A student's course and assignment pages show their own dates (their extension's) and the feedback left for them."""

from datetime import timedelta

import pytest

from labs.courses import services
from tests.labs.courses.factories import fast_passwords, make_assignment, make_course  # noqa: F401
from tests.labs.factories import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]

WHEN = "%Y-%m-%d %H:%M"


@pytest.fixture
def course(ian, alice, bob, labs_loaded):
    return make_course(ian, students=(alice, bob))


@pytest.fixture
def assignment(course, ian):
    return make_assignment(course, ian, close_after_due=timedelta(days=3))


def _leave_feedback(course, assignment, ian, text):
    response = client_for(ian).post(f"/courses/{course.slug}/a/{assignment.slug}/students/alice/", {"text": text})
    assert response.status_code in (200, 302)


def test_the_course_page_shows_alice_her_extension_not_the_original_dates(course, assignment, ian, alice, bob):
    services.set_group(course, ian, "s1", ["alice"])
    due, close = assignment.due_at + timedelta(days=2), assignment.close_at + timedelta(days=4)
    services.set_override(assignment, ian, group="s1", due_at=due, close_at=close)
    page = client_for(alice).get(f"/courses/{course.slug}/").content.decode()
    assert f'<span class="due">{due:{WHEN}}</span>' in page and f'<span class="close">{close:{WHEN}}</span>' in page
    assert f"{assignment.due_at:{WHEN}}" not in page and "your extension: group override (s1)" in page
    bobs = client_for(bob).get(f"/courses/{course.slug}/").content.decode()
    assert f'<span class="due">{assignment.due_at:{WHEN}}</span>' in bobs and "your extension" not in bobs


def test_the_assignment_page_shows_alice_her_extension(course, assignment, ian, alice):
    due = assignment.close_at + timedelta(days=1)
    services.set_override(assignment, ian, student="alice", due_at=due)
    page = client_for(alice).get(f"/courses/{course.slug}/a/{assignment.slug}/").content.decode()
    assert f'<span id="due">{due:{WHEN}}</span>' in page and f"hard close {due:{WHEN}}" in page
    assert "student override" in page


def test_feedback_shows_on_alices_course_and_assignment_pages_and_nowhere_for_bob(course, assignment, ian, alice, bob):
    _leave_feedback(course, assignment, ian, "Coalesce the loads in the inner loop.")
    course_page = client_for(alice).get(f"/courses/{course.slug}/").content.decode()
    assert 'class="feedback"' in course_page and "Coalesce the loads in the inner loop." in course_page
    assert '<span class="muted">ian, ' in course_page  # who left it
    page = client_for(alice).get(f"/courses/{course.slug}/a/{assignment.slug}/").content.decode()
    assert 'id="feedback"' in page and "Coalesce the loads in the inner loop." in page
    for url in (f"/courses/{course.slug}/", f"/courses/{course.slug}/a/{assignment.slug}/"):
        assert "Coalesce the loads" not in client_for(bob).get(url).content.decode()


def test_staff_see_the_assignments_own_dates_on_the_course_page(course, assignment, ian):
    services.set_override(assignment, ian, student="alice", due_at=assignment.due_at + timedelta(days=2))
    page = client_for(ian).get(f"/courses/{course.slug}/").content.decode()
    assert f"due {assignment.due_at:{WHEN}} UTC" in page and "your extension" not in page
