"""On the CPU tier, alice's CUDA C++ kernel that reads past an array or misaligns gets a runtime error on
her line, as compute-sanitizer's memcheck would say it, from the PTX executor; one that runs forever times out."""

from __future__ import annotations

from engine_factories import alices_job, run

UNGUARDED = """
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] + b[i];
}
"""
MISALIGNED = """
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float* shifted = (const float*)((const char*)a + 2);
        c[i] = shifted[0] + b[i];
    }
}
"""
ENDLESS = """
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    volatile int k = 0;
    while (k >= 0) { k = k + 1; k = k % 7; }
    if (i < n) c[i] = a[i] + b[i];
}
"""


def test_a_read_past_the_end_is_a_runtime_error_on_the_line_that_made_it():
    result = run(alices_job(UNGUARDED, "cuda")).result
    assert result.verdict == "runtime_error" and result.executed_by == "ptx_executor"  # the executor's fault
    assert result.message.startswith("line 5: out-of-bounds load of 4 bytes: element 1000 of 'a'")
    assert "thread (232, 0, 0) of block (3, 0, 0)" in result.message
    (diagnostic,) = result.diagnostics
    assert diagnostic.line == 5


def test_a_misaligned_read_is_a_runtime_error_naming_the_alignment():
    result = run(alices_job(MISALIGNED, "cuda")).result
    assert result.verdict == "runtime_error"
    assert result.message.startswith("line 7: misaligned load of 4 bytes at byte 2 of 'a'")


def test_an_endless_loop_times_out_at_the_instruction_budget_on_its_line():
    result = run(alices_job(ENDLESS, "cuda")).result
    assert result.verdict == "timeout" and "thread-instructions" in result.message
    assert result.message.startswith("time limit exceeded: line 6:")


MATCHED = """
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i] + (__match_any_sync(__activemask(), n) == 0 ? 1.0f : 0.0f);
}
"""


def test_an_instruction_the_executor_does_not_run_is_not_run_naming_it_and_its_line():
    result = run(alices_job(MATCHED, "cuda")).result
    assert result.verdict == "not_run"
    assert "not supported by the CPU tier's executor: `match.any.sync.b32` (a warp match" in result.message
    assert "at line 5;" in result.message
    assert result.message.endswith("it runs on a GPU worker")
