"""On the CPU tier alice's Numba kernel runs as the PTX Numba compiled, on the executor, and says so, its
`print` and libdevice's `math.sin` (carry arithmetic, bit-field inserts) included; a kernel the executor cannot
run (a float64 `math.sin`: a call of libdevice's slow path) is not run, naming the call and its line: Numba's
simulator, once its fallback, is gone from the CPU tier.
The result's `executed_by` is the engine's own reading of the PTX it was sent, which grades trust (never the
child's notes)."""

from __future__ import annotations

from engine_factories import alices_job, run, vector_add_lab

from gpu_worker.backends import SIM_DEVICE

LAB = vector_add_lab()
PRINTING = """
from numba import cuda


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < 2:
        print("thread", i, "was here")
    if i < c.size:
        c[i] = a[i] + b[i]
"""
SINE = """
import math

from numba import cuda


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i] + 0.0 * math.sin(a[i])
"""
SINE64 = SINE.replace("math.sin(a[i])", "math.sin(a[i] * 1000.0)")  # float64: a call of the slow path


def executor_notes(notes: list[str]) -> list[str]:
    return [n for n in notes if n.startswith("run on the CPU: CPU tier: PTX executor")]


def test_the_reference_runs_on_the_executor_with_its_memory_report():
    result = run(alices_job(LAB.references["numba"], "numba")).result
    assert result.verdict == "accepted" and result.device == SIM_DEVICE
    assert executor_notes(result.compile.notes) and result.executed_by == "ptx_executor"
    assert result.memory["model"].startswith("PTX executor")
    assert {row["sectors_per_request"] for row in result.memory["lines"]} == {3.91}  # 1000 floats: a partial warp


def test_a_printing_kernel_prints_from_the_executor():
    result = run(alices_job(PRINTING, "numba")).result
    assert result.verdict == "accepted", result.message
    assert executor_notes(result.compile.notes)
    assert result.output.splitlines() == ["thread 0 was here", "thread 1 was here"]
    assert result.executed_by == "ptx_executor"


def test_a_sine_runs_on_the_executor_through_libdevices_range_reduction():
    result = run(alices_job(SINE, "numba")).result
    assert result.verdict == "accepted", result.message
    assert executor_notes(result.compile.notes)


def test_a_kernel_with_an_instruction_the_executor_lacks_is_not_run_and_says_where():
    result = run(alices_job(SINE64, "numba")).result
    assert result.verdict == "not_run", result.message
    assert "`call` of" in result.message and "line " in result.message
    assert result.message.endswith("it runs on a GPU worker")
    assert not executor_notes(result.compile.notes)
    assert result.executed_by is None  # no kernel ran


def test_a_kernel_that_does_not_compile_was_executed_by_nothing():
    result = run(alices_job(PRINTING.replace("if i < c.size:", "if i < c.size"), "numba")).result
    assert result.verdict == "compile_error" and result.executed_by is None
