"""A regrade re-executes the counted runs through the normal submit path, records the harness version and shows
what changed; code similarity shows pairs with their matching lines, the starter left out."""

from datetime import timedelta

import pytest

from labs.courses import grading, integrity
from labs.models import Submission
from labs.runs import services
from tests.labs.courses.factories import fast_passwords, make_assignment, make_course, measured, run_at  # noqa: F401
from tests.labs.factories import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]


@pytest.fixture
def course(ian, alice, bob, labs_loaded):
    return make_course(ian, students=(alice, bob))


def test_a_regrade_queues_each_counted_run_again_on_its_queue_and_shows_the_change(course, ian, alice):
    assignment = make_assignment(course, ian, goal=0.6)
    original = run_at(alice, assignment.due_at - timedelta(hours=1), measured(roof_pct=60), source="// mine")
    response = client_for(ian).post(f"/courses/{course.slug}/a/{assignment.slug}/regrades")
    assert response.status_code == 302
    rerun = Submission.objects.get(regrade_of__original=original)
    assert rerun.source == "// mine" and rerun.queue == original.queue and rerun.owner == alice
    assert rerun.exercise_version == original.exercise.version  # a run records the lab version it ran against
    assert rerun.events.first().type == "queued"  # it went through submit_run like any run
    assert rerun.regrade_of.harness_version == original.exercise.version and rerun.regrade_of.old_score == 10.0
    services.record_result(rerun.pk, measured(roof_pct=30) | {"submission_id": rerun.pk})
    page = client_for(ian).get(response["Location"]).content.decode()
    assert "<strong>changed</strong>" in page and "7.5" in page
    item = assignment.items.select_related("exercise", "assignment").get()
    g = grading.grade(item, alice)
    assert g.score == 7.5 and g.counted.measured == rerun and g.attempts == 1  # the re-execution is no attempt


def test_similar_code_is_paired_with_its_matching_lines_and_the_starter_does_not_count(course, ian, alice, bob):
    assignment = make_assignment(course, ian)
    item = assignment.items.select_related("exercise", "assignment").get()
    starter = item.exercise.starters["numba"]
    copied = starter + "\n\ndef helper(x, y, z):\n" + "".join(f"    x[{i}] = y[{i}] * z[{i}] + {i}\n" for i in range(8))
    run_at(alice, assignment.release_at, measured(), language="numba", source=copied)
    run_at(bob, assignment.release_at, measured(), language="numba", source=copied.replace("helper", "mine"))
    pairs = integrity.pairs(item)
    assert len(pairs) == 1 and {pairs[0].left.username, pairs[0].right.username} == {"alice", "bob"}
    assert any("y[3] * z[3]" in text for _, text in pairs[0].left.lines)
    starter_lines = {line for line in starter.splitlines() if line.strip()}
    assert not any(text in starter_lines for _, text in pairs[0].left.lines)
    page = client_for(ian).get(f"/courses/{course.slug}/a/{assignment.slug}/integrity/").content.decode()
    assert "y[3] * z[3]" in page


def test_two_starters_handed_in_unchanged_are_not_a_pair(course, ian, alice, bob):
    assignment = make_assignment(course, ian)
    item = assignment.items.select_related("exercise", "assignment").get()
    for who in (alice, bob):
        run_at(who, assignment.release_at, measured(), language="numba", source=item.exercise.starters["numba"])
    assert integrity.pairs(item) == []
