"""On the CPU tier alice's Numba kernel runs as the PTX Numba compiled, on the executor, and says so; a kernel the
executor cannot run (a `print`: a call of vprintf) runs on Numba's simulator instead, and says that. The result's
`executed_by` is the engine's own reading of the PTX it was sent, which grades trust (never the child's notes)."""

from __future__ import annotations

from engine_factories import alices_job, run, vector_add_lab

from gpu_worker.backends import SIM_DEVICE

LAB = vector_add_lab()
PRINTING = """
from numba import cuda


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i == 0:
        print("thread zero was here")
    if i < c.size:
        c[i] = a[i] + b[i]
"""


def test_the_reference_runs_on_the_executor_with_its_memory_report():
    result = run(alices_job(LAB.references["numba"], "numba")).result
    assert result.verdict == "accepted" and result.device == SIM_DEVICE
    assert result.executed_by == "ptx_executor"
    assert any(note.startswith("run on the CPU: CPU tier: PTX executor") for note in result.compile.notes)
    assert result.memory["model"].startswith("PTX executor")
    assert {row["sectors_per_request"] for row in result.memory["lines"]} == {3.91}  # 1000 floats: a partial warp


def test_a_printing_kernel_falls_back_to_numbas_simulator_labelled():
    result = run(alices_job(PRINTING, "numba")).result
    assert result.verdict == "accepted", result.message
    (fallback,) = [n for n in result.compile.notes if "the fallback" in n]
    assert fallback.startswith("run on Numba's CUDA simulator (the fallback)") and "`call` of printf" in fallback
    assert "thread zero was here" in result.output
    assert result.executed_by == "numba_simulator"


def test_a_kernel_that_does_not_compile_was_executed_by_nothing():
    result = run(alices_job(PRINTING.replace("c[i] = a[i] + b[i]", "c[i] = a[i] +"), "numba")).result
    assert result.verdict == "compile_error" and result.executed_by is None
