"""The gradebook: students by exercises with score, time, % of roof, attempts and late days; CSV in Canvas's and
Moodle's import columns; per student every run with its code, and a feedback comment the student then reads."""

import csv
import io
from datetime import timedelta

import pytest

from tests.labs.courses.factories import fast_passwords, make_assignment, make_course, measured, run_at  # noqa: F401
from tests.labs.factories import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]


@pytest.fixture
def graded(ian, alice, bob, labs_loaded):
    alice.first_name, alice.last_name = "Alice", "Liddell"
    alice.save()
    course = make_course(ian, "GPU Programming", students=(alice, bob))
    assignment = make_assignment(course, ian, title="Memory bound", goal=0.6, late_credit=[0.5])
    run_at(alice, assignment.due_at - timedelta(hours=2), measured(seconds=2.5e-4, roof_pct=30), source="// try 1")
    run_at(alice, assignment.due_at - timedelta(hours=1), measured(seconds=1.25e-4, roof_pct=60), source="// try 2")
    run_at(bob, assignment.due_at + timedelta(hours=3), measured(seconds=1.25e-4, roof_pct=60))
    return course, assignment


def test_the_gradebook_shows_score_time_roof_attempts_and_late_days(graded, ian):
    course, _ = graded
    page = client_for(ian).get(f"/courses/{course.slug}/gradebook/").content.decode()
    alice = page.split('data-student="alice"')[1].split("</tr>")[0]
    assert "10.00</span>/10.0" in alice and "0.125 ms" in alice and "60% of roof" in alice and "2 attempts" in alice
    bob = page.split('data-student="bob"')[1].split("</tr>")[0]
    assert "5.00</span>/10.0" in bob and '<span class="late">1</span> late day' in bob


def test_the_canvas_export_has_canvas_columns_and_points_possible(graded, ian):
    course, _ = graded
    response = client_for(ian).get(f"/courses/{course.slug}/gradebook/canvas.csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert response["Content-Type"].startswith("text/csv")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Memory bound"]
    assert rows[1][0].strip() == "Points Possible" and rows[1][5] == "10"
    assert [rows[2][0], rows[2][3], rows[2][5]] == ["Liddell, Alice", "alice", "10"]
    assert rows[3][3:] == ["bob", "GPU Programming", "5"]


def test_the_moodle_export_has_moodle_columns(graded, ian):
    course, _ = graded
    rows = list(
        csv.reader(io.StringIO(client_for(ian).get(f"/courses/{course.slug}/gradebook/moodle.csv").content.decode()))
    )
    assert rows[0] == ["First name", "Last name", "Username", "Email address", "Memory bound"]
    assert rows[1] == ["Alice", "Liddell", "alice", "", "10"]


def test_the_student_page_shows_every_run_with_its_code_and_feedback_reaches_the_student(graded, ian, alice):
    course, assignment = graded
    url = f"/courses/{course.slug}/a/{assignment.slug}/students/alice/"
    page = client_for(ian).get(url).content.decode()
    assert "// try 1" in page and "// try 2" in page and page.count('id="run-') == 2
    assert client_for(ian).post(url, {"text": "Good coalescing."}).status_code == 302
    assert "Good coalescing." in client_for(alice).get(f"/courses/{course.slug}/a/{assignment.slug}/").content.decode()


def test_empty_feedback_is_refused_with_a_message(graded, ian):
    course, assignment = graded
    response = client_for(ian).post(f"/courses/{course.slug}/a/{assignment.slug}/students/alice/", {"text": " "})
    assert response.status_code == 400 and "The comment is empty" in response.content.decode()
