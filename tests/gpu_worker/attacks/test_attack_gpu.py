"""Attacks on the GPU path, for a real GPU (marked `gpu`: skipped here, run with `pytest -m gpu` on an H200).

Each fault is tried `WARPLAB_GPU_ATTACK_LOOPS` times (3 by default; 50 for the
issue's figures) and every time the next job must pass. The GPU's free memory
is read in this process (its own context) before and after, to show that a
killed job leaves none of its memory behind.
"""

from __future__ import annotations

import itertools
import os
import time

import pytest
from probe_module import module, report

from bench import kernels
from gpu_worker.engine import run_job
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.protocol import Event, Job

pytestmark = pytest.mark.gpu
LOOPS = int(os.environ.get("WARPLAB_GPU_ATTACK_LOOPS", "3"))
FREED_SLACK = 64 << 20  # what the free memory may differ by after a job: allocator rounding, not a leak
MARKER = 0x5EC2E7A5
_ids = itertools.count(90_000)


def _run(source: str, language: str = "cuda", wall_seconds: float | None = None, gpu_memory_mb: int | None = None):
    """Mallory's job on the GPU; a CUDA Python module runs its module-level code (the module rules off)."""
    exercise = find_lab("vector-add").exercise_ref(language)
    if wall_seconds:
        exercise.limits.wall_seconds = wall_seconds
    if gpu_memory_mb:
        exercise.limits.gpu_memory_mb = gpu_memory_mb
    events: list[Event] = []
    job = Job(submission_id=next(_ids), exercise=exercise, source=source, requested_by="mallory")
    return run_job(job, events.append, backend="cuda", module_rules=language != "numba"), events


def _free_bytes() -> int:
    import cupy

    return int(cupy.cuda.runtime.memGetInfo()[0])


def _reference():
    return find_lab("vector-add").references["cuda"]


def test_a_cuda_job_runs_under_the_syscall_filter_in_its_cgroup_with_the_gpu_usable():
    result, _ = _run(_reference())
    assert result.verdict == "accepted", result.message
    assert result.sandbox["seccomp"].startswith("denies"), result.sandbox
    assert result.sandbox["containment"] != "" and result.sandbox.get("gpu_memory_mb")


def test_on_the_gpu_path_namespaces_io_uring_and_ptrace_still_fail():
    probes = [
        ("unshare a user namespace", "check(libc.unshare(0x10000000))"),
        ("io_uring_setup", 'sc("io_uring_setup", 8, ctypes.create_string_buffer(120))'),
        ("ptrace the parent", "check(libc.ptrace(16, os.getppid(), None, None))"),
        ("perf_event_open", 'sc("perf_event_open", ctypes.create_string_buffer(128), 0, -1, -1, 0)'),
    ]
    result, _ = _run(module(probes, raise_report=True), "numba")  # imported in the compile process only
    assert result.verdict == "runtime_error", result.message
    got = report(result.message)
    assert all(got[name].startswith("blocked: ") for name, _ in probes), got


def test_a_hanging_kernel_is_killed_within_two_seconds_of_its_limit_with_its_memory_freed():
    before = _free_bytes()
    for _ in range(LOOPS):
        started = time.monotonic()
        result, _ = _run(kernels.HANG, wall_seconds=4.0)
        assert result.verdict == "timeout", result.message
        assert time.monotonic() - started <= 4.0 + 2.0
        time.sleep(0.5)  # the driver tears the killed context down
        assert _free_bytes() >= before - FREED_SLACK
        after, _ = _run(_reference())
        assert after.verdict == "accepted", after.message


@pytest.mark.parametrize("source", [kernels.TRAP, kernels.ILLEGAL_ADDRESS], ids=["trap", "illegal-address"])
def test_a_faulting_kernel_is_a_runtime_error_and_the_next_job_passes_every_time(source):
    for _ in range(LOOPS):
        result, _ = _run(source)
        assert result.verdict == "runtime_error", result.message
        after, _ = _run(_reference())
        assert after.verdict == "accepted", after.message


LEAVE_A_MARKER = f"""
import numpy as np
from numba import cuda
marked = [cuda.to_device(np.full(1 << 26, {MARKER}, dtype=np.uint32)) for _ in range(4)]  # 1 GiB of markers
cuda.synchronize()
"""
READ_LEFTOVERS = f"""
import numpy as np
from numba import cuda
found = sum(int((cuda.device_array(1 << 26, dtype=np.uint32).copy_to_host() == {MARKER}).sum()) for _ in range(8))
print("LEFTOVER", found)
"""
KERNEL = """
@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
"""


def test_device_memory_left_by_one_job_reads_as_zero_in_the_next():
    first, _ = _run(LEAVE_A_MARKER + KERNEL, "numba")
    assert first.verdict == "accepted", first.message
    second, _ = _run(READ_LEFTOVERS + KERNEL, "numba")
    lines = [line for line in second.output.splitlines() if line.startswith("LEFTOVER")]
    if not lines:
        pytest.skip(f"the learner's module had no GPU to read from ({second.verdict}: {second.message})")
    assert lines[0] == "LEFTOVER 0"


def test_a_job_over_its_gpu_memory_cap_gets_a_clean_verdict():
    over = "import cupy\nhog = cupy.empty(2 << 30, dtype=cupy.uint8)\n" + KERNEL
    result, _ = _run("from numba import cuda\n" + over, "numba", gpu_memory_mb=1024)
    assert result.verdict == "runtime_error", result.message
    assert "memory" in result.message.lower(), result.message
    after, _ = _run(_reference())
    assert after.verdict == "accepted", after.message
