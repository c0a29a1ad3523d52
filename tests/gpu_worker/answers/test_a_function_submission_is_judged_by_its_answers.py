"""Alice's function runs sandboxed on every case; the worker judges each answer against its own reference."""

from __future__ import annotations

import textwrap

from gpu_worker.answers import architectures
from gpu_worker.engine import run_job
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.protocol import Job


def run(source: str):
    job = Job(
        submission_id=4243,
        exercise=find_lab("architectures").exercise_ref("function"),
        source=textwrap.dedent(source),
        requested_by="alice",
    )
    events = []
    return run_job(job, events.append, backend="sim"), events


def test_the_reference_answers_every_case_on_all_four_chips():
    result, events = run(find_lab("architectures").references["function"])
    assert result.verdict == "accepted", result.message
    assert len(result.checks) == 11 * 4
    assert [e.type for e in events].count("check") == 44


def test_a_wrong_answer_names_the_case_the_expected_answer_and_why():
    result, _ = run(
        """
        def resident_warps(kernel, arch):
            return 64, "warps"
        """
    )
    assert result.verdict == "wrong_answer"
    assert "256 threads, 32 registers, 0 B shared on MI300X" in result.message
    assert "expected 32 wavefronts" in result.message
    assert "What-if" in result.message  # the calculator's own sentence says why


def test_an_answer_of_the_wrong_shape_is_wrong_not_a_crash():
    result, _ = run(
        """
        def resident_warps(kernel, arch):
            return {"warps": 64}
        """
    )
    assert result.verdict == "wrong_answer"
    assert "(resident warps, limiter)" in result.message


def test_an_exception_names_the_case_it_happened_in():
    result, _ = run(
        """
        def resident_warps(kernel, arch):
            if arch.vendor == "amd":
                raise ValueError("no AMD yet")
            return 0, "warps"
        """
    )
    assert result.verdict == "runtime_error"
    assert result.message.startswith("case 3 of 44")


def test_a_file_without_the_function_is_rejected():
    result, _ = run("def something_else(kernel, arch):\n    return 0, 'warps'\n")
    assert result.verdict == "rejected"


def test_the_limiter_may_be_any_resource_tied_at_the_answer():
    arch = architectures.view("gfx942")
    kernel = {"threads_per_block": 96, "registers_per_thread": 24, "shared_bytes_per_block": 0}
    for limiter in ("warps", "registers", "blocks"):
        assert architectures.judge(kernel, arch, [32, limiter])[0]
    assert not architectures.judge(kernel, arch, [32, "shared_memory"])[0]


def test_a_kernel_that_cannot_launch_is_zero_warps_limited_by_what_forbids_it():
    kernel = {"threads_per_block": 1024, "registers_per_thread": 128, "shared_bytes_per_block": 0}
    assert architectures.reference(kernel, "sm_90")[:2] == (0, {"registers"})
    assert architectures.reference(kernel, "gfx1100")[:2] == (32, {"registers"})
