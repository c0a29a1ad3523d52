"""A job carries the roofline points it is drawn beside: alice's earlier timed runs and the reference's newest."""

from pathlib import Path

import pytest

from gpu_worker.protocol import SOURCE_SUFFIX
from labs.models import Exercise
from labs.runs import services
from labs.runs.roofline_points import HISTORY_LIMIT
from tests.labs.factories import make_run, timed_result

pytestmark = pytest.mark.django_db


@pytest.fixture
def reference_cuda(labs_loaded) -> str:
    return Exercise.objects.get(slug="vector-add").references["cuda"]


def test_sync_labs_stores_each_languages_reference(labs_loaded):
    exercise = Exercise.objects.get(slug="vector-add")
    folder = Path(exercise.folder)
    assert set(exercise.references) == {"cuda", "numba", "triton"}
    assert exercise.references == {
        language: (folder / f"reference{SOURCE_SUFFIX[language]}").read_text() for language in exercise.references
    }


def test_history_is_alices_earlier_runs_of_this_exercise_language_and_queue(alice, bob, labs_loaded):
    mine = make_run(alice, result=timed_result(flop_rate=250e9))
    make_run(alice, language="numba")
    make_run(bob)
    make_run(alice, exercise="transpose")
    make_run(alice, queue="sim")  # another queue: another kind of slice and backend
    current = make_run(alice, result={})
    later = make_run(alice)  # not earlier than the run being built
    job = services.build_job(current)
    assert [p.submission_id for p in job.history] == [mine.pk]
    point = job.history[0]
    assert point.flop_rate == 250e9 and point.device == "NVIDIA H200"
    assert point.label.startswith(f"#{mine.pk}, {mine.created_at.year}-")
    assert later.pk not in [p.submission_id for p in job.history]


def test_history_skips_results_above_the_roof_untimed_or_without_metrics(alice, labs_loaded):
    good = make_run(alice)
    make_run(alice, result=timed_result(flop_rate=9e15, above_roof=True))
    make_run(alice, result=timed_result(flop_rate=None))
    make_run(alice, verdict="compile_error", result={"device": "NVIDIA H200", "metrics": None})
    current = make_run(alice, result={})
    assert [p.submission_id for p in services.build_job(current).history] == [good.pk]


def test_history_keeps_the_newest_twenty(alice, labs_loaded):
    runs = [make_run(alice, result=timed_result(flop_rate=1e9 * (i + 1))) for i in range(HISTORY_LIMIT + 5)]
    current = make_run(alice, result={})
    history = services.build_job(current).history
    assert HISTORY_LIMIT == 20
    assert [p.submission_id for p in history] == [r.pk for r in reversed(runs[-HISTORY_LIMIT:])]


def test_the_reference_is_the_newest_accepted_timed_run_of_a_reference_source(alice, bob, ian, reference_cuda):
    make_run(bob, reference_cuda, timed_result(flop_rate=320e9))
    newest = make_run(ian, reference_cuda, timed_result(flop_rate=340e9))
    make_run(bob, reference_cuda, timed_result(flop_rate=None))  # newer, but not timed
    make_run(bob, reference_cuda, timed_result(flop_rate=350e9), verdict="wrong_answer")
    make_run(bob, reference_cuda + "\n// mine now", timed_result(flop_rate=360e9))  # not the reference's source
    job = services.build_job(make_run(alice, result={}))
    assert job.reference is not None
    assert job.reference.submission_id == newest.pk and job.reference.flop_rate == 340e9
    assert job.reference.label == f"reference (cuda), #{newest.pk}"


def test_there_is_no_reference_point_before_a_reference_ran(alice, reference_cuda):
    make_run(alice, "// not the reference")
    job = services.build_job(make_run(alice, result={}))
    assert job.reference is None and len(job.history) == 1
