"""An assignment graded on correctness counts runs on any tier whose outputs the learner's code could not make: a GPU
lane, or the CPU tier's PTX executor (as the engine recorded it in `executed_by`). A run the CPU tier's fallback ran
(Numba's simulator) is not counted and says why; the gradebook, the CSV export and a regrade follow the basis, and
performance assignments (the default, and every assignment made before the basis) count as they did."""

import csv
import io
from datetime import timedelta

import pytest

from labs.courses import grading
from labs.models import Assignment, Submission
from labs.models.course import GradingBasis, Selection
from labs.runs import services
from tests.labs.courses.factories import (  # noqa: F401
    CPU_TIER,
    fast_passwords,
    make_assignment,
    make_course,
    measured,
    on_the_cpu_tier,
    run_at,
)
from tests.labs.factories import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_passwords")]


@pytest.fixture
def course(ian, alice, bob, labs_loaded):
    alice.first_name, alice.last_name = "Alice", "Liddell"
    alice.save()
    return make_course(ian, students=(alice, bob))


def _correctness(course, ian, **options):
    return make_assignment(course, ian, grading_basis=GradingBasis.CORRECTNESS, **options)


def _item(assignment):
    return assignment.items.select_related("exercise", "assignment").get()


def test_an_accepted_run_on_the_ptx_executor_gets_the_points(course, ian, alice):
    assignment = _correctness(course, ian)
    run_at(alice, assignment.due_at - timedelta(hours=1), on_the_cpu_tier(), queue=CPU_TIER)
    g = grading.grade(_item(assignment), alice)
    assert g.score == 10.0 and g.counted.reason == "" and g.counted.device.startswith("CPU tier: PTX executor")


def test_a_late_run_gets_the_curves_credit_and_a_wrong_answer_scores_zero(course, ian, alice):
    assignment = _correctness(course, ian, late_credit=[0.8], selection=Selection.LAST)
    run_at(alice, assignment.due_at + timedelta(hours=2), on_the_cpu_tier(), queue=CPU_TIER)
    run_at(alice, assignment.due_at + timedelta(hours=3), on_the_cpu_tier("wrong_answer"), queue=CPU_TIER)
    assert [r.score for r in grading.grade(_item(assignment), alice).runs] == [8.0, 0.0]


def test_a_run_of_the_simulator_fallback_is_not_counted_and_says_why(course, ian, alice):
    assignment = _correctness(course, ian)
    run_at(alice, assignment.due_at - timedelta(hours=1), on_the_cpu_tier(executed_by="numba_simulator"), queue="sim")
    g = grading.grade(_item(assignment), alice)
    (run,) = g.runs
    assert g.score is None and run.score is None
    assert run.reason.startswith("not counted: the CPU tier ran this kernel on Numba's CUDA simulator")


def test_a_cpu_tier_result_that_does_not_say_what_ran_it_is_not_counted(course, ian, alice):
    assignment = _correctness(course, ian)
    run_at(alice, assignment.due_at - timedelta(hours=1), on_the_cpu_tier(executed_by=None), queue=CPU_TIER)
    (run,) = grading.grade(_item(assignment), alice).runs
    assert run.score is None and "does not say the PTX executor made its outputs" in run.reason


def test_a_run_on_a_shared_gpu_slice_counts_for_correctness_but_not_for_performance(course, ian, alice):
    correctness = _correctness(course, ian, title="Correct")
    performance = make_assignment(course, ian, title="Fast")
    run_at(alice, correctness.due_at - timedelta(hours=1), measured(executed_by="gpu"), queue="gpu.h200.mps30")
    assert grading.grade(_item(correctness), alice).score == 10.0
    assert grading.grade(_item(performance), alice).score is None


def test_assignments_are_graded_on_performance_unless_told_so_the_cpu_tier_stays_practice(course, ian, alice):
    assignment = make_assignment(course, ian)
    assert Assignment.objects.get(pk=assignment.pk).grading_basis == GradingBasis.PERFORMANCE
    run_at(alice, assignment.due_at - timedelta(hours=1), on_the_cpu_tier(), queue=CPU_TIER)
    (run,) = grading.grade(_item(assignment), alice).runs
    assert run.score is None and run.reason.startswith("practice, indicative: the sim backend")


def test_the_gradebook_and_the_canvas_export_count_the_cpu_tier_for_correctness(course, ian, alice, bob):
    assignment = _correctness(course, ian, title="Correct first")
    run_at(alice, assignment.due_at - timedelta(hours=1), on_the_cpu_tier(), queue=CPU_TIER)
    run_at(bob, assignment.due_at - timedelta(hours=1), on_the_cpu_tier(executed_by="numba_simulator"), queue="sim")
    page = client_for(ian).get(f"/courses/{course.slug}/gradebook/").content.decode()
    alices = page.split('data-student="alice"')[1].split("</tr>")[0]
    assert "10.00</span>/10.0" in alices and "accepted on CPU tier: PTX executor" in alices
    bobs = page.split('data-student="bob"')[1].split("</tr>")[0]
    assert "—" in bobs and "not counted: the CPU tier ran this kernel on Numba&#x27;s CUDA simulator" in bobs
    assert "(correctness)" in page
    rows = list(csv.reader(io.StringIO(client_for(ian).get(f"/courses/{course.slug}/gradebook/canvas.csv").text)))
    assert rows[0][-1] == "Correct first"
    assert {row[3]: row[-1] for row in rows[2:]} == {"alice": "10", "bob": "0"}


def test_a_regrade_re_executes_the_counted_cpu_tier_run_on_the_cpu_tier(course, ian, alice):
    assignment = _correctness(course, ian)
    original = run_at(alice, assignment.due_at - timedelta(hours=1), on_the_cpu_tier(), queue=CPU_TIER)
    response = client_for(ian).post(f"/courses/{course.slug}/a/{assignment.slug}/regrades")
    assert response.status_code == 302
    rerun = Submission.objects.get(regrade_of__original=original)
    assert rerun.queue == CPU_TIER and rerun.regrade_of.old_score == 10.0
    fallback = on_the_cpu_tier(executed_by="numba_simulator") | {"submission_id": rerun.pk}
    services.record_result(rerun.pk, fallback)
    g = grading.grade(_item(assignment), alice)
    assert g.score is None and g.runs[0].measured == rerun and g.runs[0].reason.startswith("not counted")


def test_the_instructor_picks_the_basis_in_the_form_and_changes_it_on_the_assignment_page(course, ian, alice):
    ian_client = client_for(ian)
    form = ian_client.get(f"/courses/{course.slug}/assignments/new").content.decode()
    assert 'value="correctness"' in form and "the CPU tier's PTX executor, which runs the compiled PTX" in form
    assignment = make_assignment(course, ian)
    url = f"/courses/{course.slug}/a/{assignment.slug}/"
    assert ian_client.post(url + "basis", {"grading_basis": "correctness"}).status_code == 302
    assert Assignment.objects.get(pk=assignment.pk).grading_basis == GradingBasis.CORRECTNESS
    assert "Graded on correctness" in client_for(alice).get(url).content.decode()
    assert ian_client.post(url + "basis", {"grading_basis": "speed"}).status_code == 400
    assert client_for(alice).post(url + "basis", {"grading_basis": "performance"}).status_code == 403
    assert Assignment.objects.get(pk=assignment.pk).grading_basis == GradingBasis.CORRECTNESS
