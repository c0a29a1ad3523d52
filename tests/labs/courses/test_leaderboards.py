"""Leaderboards rank each student's fastest accepted graded run once, ties to the earlier submission, names as the
course chooses; runs above the roof, on shared slices or failing a re-check are never ranked."""

from datetime import timedelta

import pytest

from labs.courses import leaderboard
from labs.courses import services as courses
from labs.models import RegradeRun
from labs.runs import services
from tests.labs.courses.factories import fast_passwords, make_assignment, make_course, measured, run_at  # noqa: F401
from tests.labs.factories import client_for, make_student

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]


@pytest.fixture
def setting(ian, alice, bob, labs_loaded):
    carol = make_student("carol")
    course = make_course(ian, students=(alice, bob, carol))
    return course, make_assignment(course, ian), carol


def _item(assignment):
    return assignment.items.select_related("exercise", "assignment").get()


def test_one_row_per_student_fastest_first_ties_to_the_earlier_run(setting, alice, bob):
    _, assignment, carol = setting
    t = assignment.release_at
    run_at(alice, t + timedelta(hours=1), measured(seconds=2e-4))
    run_at(alice, t + timedelta(hours=2), measured(seconds=1e-4))
    run_at(bob, t + timedelta(hours=3), measured(seconds=1e-4))
    run_at(carol, t + timedelta(hours=1), measured(seconds=3e-4))
    board = leaderboard.exercise_board(_item(assignment))
    names = leaderboard.names(assignment)
    assert [e.name for e in board] == [names[alice.pk], names[bob.pk], names[carol.pk]]
    assert board[0].device == "NVIDIA H200" and board[0].slice == "gpu.h200.full"


def test_above_the_roof_shared_slices_and_wrong_answers_are_never_ranked(setting, alice, bob):
    _, assignment, carol = setting
    t = assignment.release_at
    run_at(alice, t, measured(seconds=1e-6, above_roof=True))
    run_at(bob, t, measured(seconds=1e-6), queue="gpu.h200.mps30")
    run_at(carol, t, measured(seconds=1e-6, verdict="wrong_answer"))
    assert leaderboard.exercise_board(_item(assignment)) == []


def test_a_run_whose_re_execution_fails_drops_off_the_board(setting, ian, alice):
    _, assignment, _ = setting
    run = run_at(alice, assignment.release_at, measured())
    regrade = courses.start_regrade(assignment, ian)
    link = RegradeRun.objects.get(regrade=regrade, original=run)
    services.record_result(link.rerun.pk, measured(verdict="wrong_answer") | {"submission_id": link.rerun.pk})
    assert leaderboard.exercise_board(_item(assignment)) == []


def test_the_board_is_pseudonymous_unless_the_course_names_people(setting, ian, alice):
    course, assignment, _ = setting
    alice.first_name, alice.last_name = "Alice", "Liddell"
    alice.save()
    run_at(alice, assignment.release_at, measured())
    url = f"/courses/{course.slug}/a/{assignment.slug}/leaderboard/"
    page = client_for(alice).get(url).content.decode()
    assert "Alice Liddell" not in page and leaderboard.names(assignment)[alice.pk] in page
    courses.set_board_names(course, ian, "named")
    assert "Alice Liddell" in client_for(alice).get(url).content.decode()
