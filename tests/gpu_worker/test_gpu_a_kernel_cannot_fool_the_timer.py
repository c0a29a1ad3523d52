"""On the H200: cheats that have beaten public kernel judges get a wrong answer or an unranked time here.

Each cheat runs through the engine on the cuda backend at vector-add's GPU sizes. The rule: never
accepted with a wrong output, and a time reported as ranked only when it is within 2% of the honest
kernel's. Cheats that need host code (a side stream, a persisting-L2 window) cannot even be written:
CUDA C++ runs no host code and a CUDA Python module runs nothing at import.
"""

from __future__ import annotations

import itertools
import statistics

import pytest

from gpu_worker.engine import run_job
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.protocol import Event, Job, Result

pytestmark = pytest.mark.gpu
_ids = itertools.count(90_000)

FIRST_LAUNCH_ONLY = r"""
__device__ int warplab_launches;
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (warplab_launches > 0) return;                 // every launch after the first does nothing
    if (i < n) c[i] = a[i] + b[i];
    if (i == n - 1) warplab_launches = 1;
}
"""

# the same two cheats keyed on the size: each size's checked launch works, every launch after it at that size
# does not (a job checks all its sizes before it times the first, so the cheats above already fail a later
# size's check; these reach the timed launches, where the guard must catch them)
FIRST_LAUNCH_OF_EACH_SIZE = r"""
__device__ int warplab_last_n;
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (warplab_last_n == n) return;                  // every launch after this size's first does nothing
    if (i < n) c[i] = a[i] + b[i];
    if (i == n - 1) warplab_last_n = n;
}
"""

DEFERS_HALF_OF_EACH_SIZE = r"""
__device__ int warplab_seen_n;
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (warplab_seen_n == n && (i & 1)) return;       // after this size's first launch, odd elements "next time"
    c[i] = a[i] + b[i];
    if (i == n - 1) warplab_seen_n = n;
}
"""

REPLAYS_ITS_CACHE = r"""
__device__ float warplab_cache[1 << 25];
__device__ int warplab_cached;
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (warplab_cached == n) { c[i] = warplab_cache[i]; return; }   // one read instead of two
    c[i] = a[i] + b[i];
    warplab_cache[i] = c[i];
    if (i == n - 1) warplab_cached = n;
}
"""

DEFERS_HALF = r"""
__device__ int warplab_seen;
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (warplab_seen > 0 && (i & 1)) return;          // after the first launch, odd elements "next time"
    c[i] = a[i] + b[i];
    if (i == n - 1) warplab_seen = 1;
}
"""

SIDE_STREAM = r"""
extern "C" __global__ void helper(const float* a, const float* b, float* c, int n) { }
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) helper<<<1, 1, 0, cudaStreamFireAndForget>>>(a, b, c, n);
}
"""

PERSISTING_L2 = r"""
#include <cuda_runtime.h>
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    cudaStreamAttrValue v;
    v.accessPolicyWindow.base_ptr = (void*)a;
    cudaStreamSetAttribute(0, cudaStreamAttributeAccessPolicyWindow, &v);
}
"""

PATCHES_THE_CLOCK = """
import cupy
cupy.cuda.get_elapsed_time = lambda a, b: 0.8 * cupy.cuda.runtime.eventElapsedTime(a.ptr, b.ptr)
from numba import cuda

@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
"""


def _run(source: str, language: str, module_rules: bool = True) -> tuple[Result, list[Event]]:
    exercise = find_lab("vector-add").exercise_ref(language)
    events: list[Event] = []
    job = Job(submission_id=next(_ids), exercise=exercise, source=source, requested_by="mallory")
    return run_job(job, events.append, backend="cuda", module_rules=module_rules), events


def _largest_median(result: Result) -> float:
    sizes = result.timing["sizes"]
    return sizes[-1]["median_ms"]


def _ranked_times(result: Result) -> list[dict]:
    return [t for t in (result.timing or {}).get("sizes", []) if t.get("counted") and t.get("ranked", True)]


@pytest.fixture(scope="module")
def honest_ms() -> float:
    medians = []
    for _ in range(2):
        result, _ = _run(find_lab("vector-add").references["cuda"], "cuda")
        assert result.verdict == "accepted", result.message
        medians.append(_largest_median(result))
    return statistics.median(medians)


@pytest.mark.parametrize(
    "source",
    [FIRST_LAUNCH_OF_EACH_SIZE, REPLAYS_ITS_CACHE, DEFERS_HALF_OF_EACH_SIZE],
    ids=["first-launch-only", "replays", "defers"],
)
def test_a_kernel_that_stops_working_after_the_checked_launch_is_never_accepted_or_ranked(source, honest_ms):
    result, _ = _run(source, "cuda")
    assert result.verdict != "accepted", result.message
    assert result.verdict == "wrong_answer"
    assert "timed launches" in result.message
    assert not _ranked_times(result) or all(
        abs(t["median_ms"] / honest_ms - 1) <= 0.02 for t in _ranked_times(result)[-1:]
    )


@pytest.mark.parametrize("source", [FIRST_LAUNCH_ONLY, DEFERS_HALF], ids=["first-launch-only", "defers"])
def test_a_kernel_that_works_on_the_jobs_first_launch_only_fails_the_next_sizes_check(source):
    result, _ = _run(source, "cuda")
    assert result.verdict == "wrong_answer", result.message
    assert "timed launches" not in result.message  # caught before any timing: every size is checked first
    assert not _ranked_times(result)


@pytest.mark.parametrize("source", [SIDE_STREAM, PERSISTING_L2], ids=["side-stream", "persisting-l2"])
def test_a_cheat_that_needs_host_code_cannot_be_written(source):
    result, _ = _run(source, "cuda")
    assert result.verdict == "compile_error", result.message


def test_a_module_that_patches_cupy_at_import_is_refused_before_it_runs():
    result, _ = _run(PATCHES_THE_CLOCK, "numba")
    assert result.verdict == "compile_error"
    assert result.compile.diagnostics[0].line == 2


def test_even_with_the_module_rules_off_a_patched_clock_never_reaches_the_timer(honest_ms):
    """The patch runs in the compile process only; the measuring process never imported the module."""
    result, _ = _run(PATCHES_THE_CLOCK, "numba", module_rules=False)
    assert result.verdict == "accepted", result.message
    assert 0.97 <= _largest_median(result) / honest_ms <= 1.05


def test_an_honest_kernel_s_timed_launches_are_checked_and_fingerprinted(honest_ms):
    result, events = _run(find_lab("vector-add").references["numba"], "numba")
    assert result.verdict == "accepted", result.message
    timed = [c for c in result.checks if "timed launches" in c.output]
    assert len(timed) == 2 * len(result.timing["sizes"]) and all(c.passed for c in timed)
    for t in result.timing["sizes"]:
        assert t["guard"]["samples_unlike_their_set"] == 0
        assert t["guard"]["samples_fingerprinted"] >= 10
        assert t["ranked"] is not False
    assert 0.97 <= _largest_median(result) / honest_ms <= 1.03


def test_the_device_fingerprint_is_the_documented_function_and_sees_one_changed_element():
    import cupy as cp
    import numpy as np

    from gpu_worker.backends.device_check import fingerprint
    from gpu_worker.measurement.launch_guard import fingerprint_host

    host = np.random.default_rng(1).standard_normal(1 << 20).astype(np.float32)
    dev = cp.asarray(host)
    assert fingerprint(cp, dev) == fingerprint_host(host)
    dev[12345] += 1.0
    assert fingerprint(cp, dev) != fingerprint_host(host)


def test_an_honest_kernel_slower_than_the_timing_budget_is_accepted_with_every_input_set_checked():
    """Run 20: the naive matmul at n = 4096 (12.6 ms a launch) got one timed sample within the budget, so
    the second input set was never launched and its poisoned outputs read as 16,777,216 wrong elements."""
    lab = find_lab("matmul-tiled")
    naive = next(case for case in lab.cases if case.name == "naive")
    job = Job(submission_id=next(_ids), exercise=lab.exercise_ref("numba"), source=naive.source, requested_by="bob")
    result = run_job(job, lambda event: None, backend="cuda")
    assert result.verdict == "accepted", result.message
    timed = [c for c in result.checks if "timed launches" in c.output]
    assert len(timed) == 2 * len(result.timing["sizes"]) and all(c.passed for c in timed)
