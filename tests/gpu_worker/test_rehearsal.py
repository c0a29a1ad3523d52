"""A spare's rehearsal is described by the engine from the lab alone (never the learner's source) and read back
by the spare as the very check the job will run, at the job's sizes."""

from __future__ import annotations

import json

from gpu_worker.backends import rehearsal
from gpu_worker.exercise.labspec import find_lab

VECTOR_ADD = find_lab("vector-add").spec.harness()
RUNS = [{"sizes": {"n": 4096}}, {"sizes": {"n": 4096}, "sweep": True}, {"sizes": {"n": 1 << 22}}]


def test_the_description_is_the_lab_s_check_at_the_job_s_distinct_sizes_and_nothing_of_the_learner():
    text = rehearsal.describe(VECTOR_ADD, "cuda", RUNS)
    assert text is not None
    raw = json.loads(text)
    assert raw["sizes"] == [{"n": 4096}, {"n": 1 << 22}]
    assert raw["expected"] == dict(VECTOR_ADD.expected) and raw["language"] == "cuda"
    assert set(raw) == {"args", "expected", "tolerance", "sizes", "language"}  # no source, no entry, no seed


def test_the_spare_reads_back_one_check_per_size_with_the_lab_s_arguments_and_tolerance():
    read = rehearsal.parse(rehearsal.describe(VECTOR_ADD, "numba", RUNS) or "")
    assert [c.sizes for c in read["checks"]] == [{"n": 4096}, {"n": 1 << 22}]
    first = read["checks"][0]
    assert [a.name for a in first.args] == [a.name for a in VECTOR_ADD.args_for("numba")]
    assert first.tolerance == VECTOR_ADD.tolerance and first.expected == dict(VECTOR_ADD.expected)
    assert read["language"] == "numba"


def test_nothing_is_rehearsed_without_expected_outputs_sizes_or_within_the_argv_bound():
    assert rehearsal.describe(VECTOR_ADD.model_copy(update={"expected": {}}), "cuda", RUNS) is None
    assert rehearsal.describe(VECTOR_ADD, "cuda", [{"sizes": {}}]) is None
    many = [{"sizes": {"n": n}} for n in range(1, 40)]
    assert len(json.loads(rehearsal.describe(VECTOR_ADD, "cuda", many) or "{}")["sizes"]) == rehearsal.MAX_SIZES
    huge = VECTOR_ADD.model_copy(update={"expected": {"c": "a + b" + " + 0 * a" * 3000}})
    assert rehearsal.describe(huge, "cuda", RUNS) is None


def test_the_engine_describes_a_rehearsal_for_gpu_spares_only_and_not_when_switched_off(monkeypatch):
    from gpu_worker import engine
    from gpu_worker.isolation import spare
    from gpu_worker.protocol import Job

    job = Job(submission_id=1, exercise=find_lab("vector-add").exercise_ref("cuda"), source="")
    monkeypatch.delenv(spare.REHEARSAL_ENV, raising=False)
    assert json.loads(engine._rehearsal(job, "cuda", RUNS) or "{}")["sizes"] == [{"n": 4096}, {"n": 1 << 22}]
    assert engine._rehearsal(job, "sim", RUNS) is None
    monkeypatch.setenv(spare.REHEARSAL_ENV, "0")
    assert engine._rehearsal(job, "cuda", RUNS) is None
