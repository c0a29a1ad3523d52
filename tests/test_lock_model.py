"""bench/lock_model.py: its shapes do the same work and differ only in how they hold the lock; a short run
through the real lock gives a row that counts what it ran."""

from __future__ import annotations

import pytest

from bench import lock_model
from gpu_worker.measurement.gpu_lock import EXCLUSIVE, SHARED


def _seconds(holds, kind):
    return sum(seconds for k, seconds in holds if k == kind)


@pytest.mark.parametrize("shape", lock_model.SHAPES)
def test_every_shape_times_alone_as_long_and_does_as_much_work(shape):
    holds = lock_model._holds(shape)
    reference = lock_model._holds("per-size")
    timed_alone = lock_model.SIZES * lock_model.EXCLUSIVE_PER_SIZE
    assert _seconds(holds, EXCLUSIVE) >= timed_alone - 1e-9  # no shape times for less
    assert sum(s for _, s in holds) == pytest.approx(sum(s for _, s in reference))


def test_the_shapes_pass_the_lock_as_often_as_the_code_they_stand_for():
    passes = {shape: sum(k is not None for k, _ in lock_model._holds(shape)) for shape in lock_model.SHAPES}
    assert passes == {"six-passes": 21, "per-size": 9, "together": 2, "beside": 3, "alone": 9}
    assert _seconds(lock_model._holds("beside"), SHARED) == 0  # checks beside timings hold nothing
    assert _seconds(lock_model._holds("alone"), SHARED) == 0  # checks alone hold the GPU exclusively


def test_a_short_run_through_the_real_lock_counts_its_jobs():
    row = lock_model.run_shape("together", workers=2, seconds=1.0, shared=0.01)
    assert row["shape"] == "together" and row["passes_per_job"] == 2 and row["jobs"] >= 2
    assert row["latency_p50_s"] >= lock_model.UNLOCKED_PER_JOB
    assert row["jobs_per_hour"] > 0 and row["lock_wait_p50_s"] >= 0
