"""Grades come from measurements on exclusive slices only, with late credit, a hard close and best or last."""

from datetime import timedelta

import pytest

from labs.courses import grading
from labs.models import Pool
from labs.models.course import GradingRule, Selection
from labs.models.gpu import Lane
from tests.labs.courses.factories import fast_passwords, make_assignment, make_course, measured, run_at  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]


@pytest.fixture
def course(ian, alice, bob, labs_loaded):
    return make_course(ian, students=(alice, bob))


def _item(assignment):
    return assignment.items.select_related("exercise", "assignment").get()


def test_a_run_at_the_goal_on_a_whole_gpu_gets_full_points(course, ian, alice):
    assignment = make_assignment(course, ian, goal=0.6)
    run_at(alice, assignment.due_at - timedelta(hours=1), measured(roof_pct=60))
    assert grading.grade(_item(assignment), alice).score == 10.0


def test_half_the_goal_gets_the_correctness_share_and_half_the_rest(course, ian, alice):
    assignment = make_assignment(course, ian, goal=0.8, correctness_weight=0.5)
    run_at(alice, assignment.due_at - timedelta(hours=1), measured(roof_pct=40))
    assert grading.grade(_item(assignment), alice).score == pytest.approx(7.5)


@pytest.mark.parametrize(
    ("result", "queue", "why"),
    [
        (measured(backend="sim"), "sim", "the sim backend"),
        (measured(), "gpu.h200.mps30", "a shared slice (mps30)"),
        (measured(shared_gpu=True), "gpu.h200.full", "another process used the GPU"),
    ],
)
def test_runs_off_an_exclusive_slice_are_practice_and_say_so(course, ian, alice, result, queue, why):
    assignment = make_assignment(course, ian)
    run_at(alice, assignment.due_at - timedelta(hours=1), result, queue=queue)
    g = grading.grade(_item(assignment), alice)
    assert g.score is None and g.runs[0].reason.startswith("practice, indicative") and why in g.runs[0].reason


def test_the_fleet_plans_lane_decides_a_pool_it_knows(course, ian, alice):
    Pool.objects.create(name="h200.mig3g", lane=Lane.EXCLUSIVE)
    Pool.objects.create(name="h200.full", lane=Lane.SHARED)  # planned as time-sliced despite its name
    assignment = make_assignment(course, ian, goal=0.6)
    run_at(alice, assignment.due_at - timedelta(hours=2), measured(roof_pct=60), queue="gpu.h200.mig3g")
    run_at(alice, assignment.due_at - timedelta(hours=1), measured(roof_pct=60), queue="gpu.h200.full")
    g = grading.grade(_item(assignment), alice)
    assert [r.score for r in g.runs] == [10.0, None]


def test_a_wrong_answer_or_a_run_above_the_roof_scores_zero(course, ian, alice):
    assignment = make_assignment(course, ian, selection=Selection.LAST)
    run_at(alice, assignment.due_at - timedelta(hours=2), measured(verdict="wrong_answer"))
    run_at(alice, assignment.due_at - timedelta(hours=1), measured(above_roof=True))
    assert [r.score for r in grading.grade(_item(assignment), alice).runs] == [0.0, 0.0]


def test_late_runs_get_the_curves_credit_and_runs_after_the_close_are_practice(course, ian, alice):
    assignment = make_assignment(course, ian, goal=0.6, late_credit=[0.8, 0.5])
    due = assignment.due_at
    run_at(alice, due + timedelta(hours=5), measured(roof_pct=60))
    run_at(alice, due + timedelta(days=1, hours=5), measured(roof_pct=60))
    run_at(alice, due + timedelta(days=3, hours=1), measured(roof_pct=60))  # the close is 3 days after due
    g = grading.grade(_item(assignment), alice)
    assert [(r.late_days, r.score) for r in g.runs] == [(1, 8.0), (2, 5.0), (4, None)]
    assert "hard close" in g.runs[2].reason and g.attempts == 2 and g.score == 8.0


def test_best_counts_the_highest_and_last_the_newest(course, ian, alice):
    best = make_assignment(course, ian, title="Best", goal=0.8)
    last = make_assignment(course, ian, title="Last", goal=0.8, selection=Selection.LAST)
    due = best.due_at
    run_at(alice, due - timedelta(hours=3), measured(roof_pct=80))
    run_at(alice, due - timedelta(hours=2), measured(roof_pct=40))
    assert grading.grade(_item(best), alice).score == 10.0
    assert grading.grade(_item(last), alice).score == 7.5


def test_the_speedup_rule_compares_with_the_references_graded_run_on_the_same_device(course, ian, alice, bob):
    assignment = make_assignment(course, ian, rule=GradingRule.SPEEDUP, goal=2.0)
    exercise = _item(assignment).exercise
    reference = exercise.references["cuda"]
    run_at(bob, assignment.release_at, measured(seconds=4e-4), source=reference)
    run_at(alice, assignment.due_at - timedelta(hours=1), measured(seconds=2e-4))
    g = grading.grade(_item(assignment), alice)
    assert g.counted.performance == pytest.approx(2.0) and g.score == 10.0


def test_a_speedup_without_a_reference_on_that_device_gets_the_correctness_share(course, ian, alice):
    assignment = make_assignment(course, ian, rule=GradingRule.SPEEDUP, goal=2.0)
    run_at(alice, assignment.due_at - timedelta(hours=1), measured(seconds=2e-4, device="NVIDIA A100"))
    assert grading.grade(_item(assignment), alice).score == 5.0
