"""A run travels for real: saved, queued in Redis, run by a Celery sim worker, reported to the web worker.

The workers are real processes on the test database; nothing is mocked.
"""

from __future__ import annotations

import pytest

from gpu_worker.exercise.labspec import find_lab
from labs.runs import services
from tests import processes

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

LAB = find_lab("vector-add")
CASES = {case.name: case for case in LAB.cases}


@pytest.fixture(scope="module")
def workers(sim_pipeline):
    return sim_pipeline


def submit_and_wait(user, language: str, case: str):
    return processes.wait_until_finished(services.submit_run(user, "vector-add", language, CASES[case].source))


def test_a_correct_numba_kernel_is_accepted_with_its_events_in_order(workers, alice, labs_loaded):
    run = submit_and_wait(alice, "numba", "reference-numba")
    assert run.verdict == "accepted", run.result
    types = [e.type for e in run.events.all()]
    # seen once on a loaded box: a figure after done; the events with their seqs and attempt name the cause
    story = [(e.seq, e.type, e.payload.get("name") or e.payload.get("message", "")[:40]) for e in run.events.all()]
    assert types[0] == "queued" and types[1] == "started" and types[-1] == "done", (run.attempts, story)
    assert "check" in types
    seqs = [e.seq for e in run.events.all()]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert run.result["backend"] == "sim" and "PTX executor" in run.result["device"]


def test_a_syntax_error_points_at_the_learners_line(workers, alice, labs_loaded):
    run = submit_and_wait(alice, "numba", "syntax-error-numba")
    assert run.verdict == "compile_error"
    assert run.result["compile"]["diagnostics"][0]["line"] == 7


def test_a_cuda_cpp_attempt_runs_on_the_cpu_tier_and_shows_its_registers(workers, alice, labs_loaded):
    run = submit_and_wait(alice, "cuda", "reference-cuda")
    assert run.verdict == "accepted"
    assert run.result["compile"]["registers"] > 0


def test_an_off_by_one_is_a_wrong_answer_with_its_first_mismatch(workers, alice, labs_loaded):
    run = submit_and_wait(alice, "numba", "off-by-one")
    assert run.verdict == "wrong_answer"
    mismatch = run.result["check"]["mismatches"][0]
    assert mismatch["index"] == 999  # the last element, never written
