"""The engine on the cuda backend: references accepted with timing and metrics; faults are runtime errors."""

from __future__ import annotations

import itertools

import pytest

from bench import kernels
from gpu_worker.engine import run_job
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.protocol import Event, Job

pytestmark = pytest.mark.gpu
_ids = itertools.count(70_000)


def _run(source: str, language: str, wall_seconds: float | None = None):
    exercise = find_lab("vector-add").exercise_ref(language)
    if wall_seconds:
        exercise.limits.wall_seconds = wall_seconds
    events: list[Event] = []
    job = Job(submission_id=next(_ids), exercise=exercise, source=source, requested_by="alice")
    return run_job(job, events.append, backend="cuda"), events


@pytest.mark.parametrize("language", ["cuda", "numba"])
def test_alices_reference_is_accepted_with_timing_metrics_and_occupancy(language):
    result, events = _run(find_lab("vector-add").references[language], language)
    assert result.verdict == "accepted", result.message
    kinds = [e.type for e in events]
    assert kinds.count("timing") == 3 and kinds.count("metrics") == 3
    assert kinds.count("occupancy") >= 3  # one per size from the GPU, and the calculator's own
    for m in result.metrics["sizes"]:
        assert m["bandwidth"] > 0 and not m["above_roof"]
    for o in result.occupancy["sizes"]:
        assert o["driver_blocks_per_sm"] == o["offline"]["active_blocks_per_sm"]
    # PTX and SASS for reading, with the learner's lines above their instructions (after the measurements)
    assert ".entry" in result.compile.ptx_excerpt and "vector_add" in result.compile.ptx_excerpt
    assert "// line" in result.compile.sass_excerpt and "STG" in result.compile.sass_excerpt
    assert kinds.index("timing") < len(kinds) - 1 - kinds[::-1].index("compiled")
    # every size checked before the first is timed, and the timings in one hold of the GPU alone (`_Child._judge`)
    before_timing = events[: kinds.index("timing")]
    assert {getattr(e, "index", None) for e in before_timing if e.type == "check"} == {0, 1, 2}
    sizes = result.timing["sizes"]
    assert [s["lock_wait_seconds"] for s in sizes[1:]] == [0.0, 0.0]
    assert all(s["lock_held_seconds"] > 0 for s in sizes)


@pytest.mark.parametrize(
    ("source", "words"),
    [
        (kernels.TRAP, "cudaErrorLaunchFailure"),
        (kernels.ILLEGAL_ADDRESS, "cudaError"),
        (kernels.DEVICE_ASSERT_DECL, "cudaErrorAssert"),
    ],
    ids=["trap", "illegal-address", "device-assert"],
)
def test_a_faulting_kernel_is_a_runtime_error_naming_the_cuda_error_and_the_next_job_passes(source, words):
    result, _ = _run(source, "cuda")
    assert result.verdict == "runtime_error" and words in result.message, result.message
    after, _ = _run(find_lab("vector-add").references["cuda"], "cuda")
    assert after.verdict == "accepted", after.message


def test_a_hanging_kernel_is_stopped_within_two_seconds_of_its_limit_and_the_next_job_passes():
    result, _ = _run(kernels.HANG, "cuda", wall_seconds=6.0)
    assert result.verdict == "timeout"
    assert result.elapsed_seconds < 6.0 + 2.0
    after, _ = _run(find_lab("vector-add").references["cuda"], "cuda")
    assert after.verdict == "accepted", after.message
