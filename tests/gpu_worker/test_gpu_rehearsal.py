"""On the GPU: a spare's rehearsal records its work and never runs it; it leaves the job's check warm and its
verdict unchanged; a reseeded generator draws what a new one draws."""

from __future__ import annotations

import logging

import pytest

from gpu_worker.backends import rehearsal
from gpu_worker.exercise.device_inputs import generator, make_device_arguments
from gpu_worker.exercise.labspec import find_lab

pytestmark = pytest.mark.gpu
LAB = find_lab("vector-add")


@pytest.fixture(scope="module")
def cp():
    return pytest.importorskip("cupy")


def test_work_queued_while_recording_never_runs(cp):
    x = cp.zeros(1 << 16, dtype=cp.float32)
    cp.cuda.runtime.deviceSynchronize()
    stream = cp.cuda.Stream(non_blocking=True)
    with rehearsal._recorded_only(cp, stream):
        x += 1.0
        y = x * 2.0  # a new array from the pool, allocated while recording
    cp.cuda.runtime.deviceSynchronize()
    assert float(x.sum()) == 0.0 and y.shape == x.shape
    assert not stream.is_capturing()


def test_a_read_back_ends_its_step_and_the_stream_records_no_more(cp):
    stream = cp.cuda.Stream(non_blocking=True)
    with pytest.raises(Exception) as refused, rehearsal._recorded_only(cp, stream):
        int(cp.arange(10).sum())
    assert rehearsal._capture_refusal(refused.value)
    assert not stream.is_capturing()


def test_a_reseeded_generator_draws_what_a_new_one_draws(cp):
    from cupy.cuda import curand

    generator(cp, 99).random_sample(1000, dtype=cp.float32)  # the kept one, moved on
    again = generator(cp, 7).random_sample(4099, dtype=cp.float32)
    new = cp.random.RandomState(7, method=curand.CURAND_RNG_PSEUDO_PHILOX4_32_10)
    fresh = new.random_sample(4099, dtype=cp.float32)
    assert bool(cp.array_equal(again, fresh))


def test_a_rehearsed_backend_warms_without_problems_and_judges_the_reference_as_before(cp, tmp_path):
    from gpu_worker.backends.cuda import CudaBackend
    from gpu_worker.backends.device_check import CheckSpec
    from gpu_worker.exercise.launch import LaunchConfig

    harness = LAB.spec.harness()
    runs = [{"sizes": {"n": 4096}}, {"sizes": {"n": 1 << 20}}]
    backend = CudaBackend()
    described = rehearsal.parse(rehearsal.describe(harness, "cuda", runs) or "")
    assert rehearsal.rehearse(backend, described, lambda: False) == []
    args = harness.args_for("cuda")
    compiled = backend.compile("cuda", LAB.references["cuda"], LAB.spec.entry, args, tmp_path)
    check = CheckSpec(args=args, expected=dict(harness.expected), tolerance=harness.tolerance, sizes={"n": 4096})
    values = make_device_arguments(cp, args, {"n": 4096}, 5)
    checks = backend.launch(compiled.handle, list(values.values()), LaunchConfig((16,), (256,), 0), check)
    assert checks and all(c.passed for c in checks)


def test_an_interrupted_rehearsal_stops_before_its_first_step(cp):
    from gpu_worker.backends.cuda import CudaBackend

    described = rehearsal.parse(rehearsal.describe(LAB.spec.harness(), "cuda", [{"sizes": {"n": 4096}}]) or "")
    calls = []

    def interrupted() -> bool:
        calls.append(1)
        return True

    assert rehearsal.rehearse(CudaBackend(), described, interrupted) == []
    assert len(calls) == 2  # asked before NVRTC, and before the first step: then stopped


def test_jobs_from_rehearsed_spares_are_accepted_and_log_no_rehearsal_problem(monkeypatch, caplog):
    from gpu_worker.engine import run_job
    from gpu_worker.isolation import spare
    from gpu_worker.protocol import Job

    monkeypatch.setenv(spare.ENV, "1")
    spare.shutdown()
    try:
        with caplog.at_level(logging.WARNING):
            results = []
            for n in range(3):
                job = Job(submission_id=95_000 + n, exercise=LAB.exercise_ref("cuda"), source=LAB.references["cuda"])
                results.append(run_job(job, lambda event: None, backend="cuda"))
    finally:
        spare.shutdown()
    assert [r.verdict for r in results] == ["accepted"] * 3
    assert results[2].sandbox.get("warm_start") is True
    assert not [r for r in caplog.records if "rehearsal" in r.getMessage()]
