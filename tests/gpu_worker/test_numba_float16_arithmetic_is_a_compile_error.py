"""Float16 arithmetic in a Numba kernel is a compile error that says what to write instead, on every backend.

numba-cuda lowers `a * b` on two float16 values to a call into its fp16 library, which only its own linker
adds; the cuda backend loads the PTX alone, so no GPU could run it, and the simulator says so too.
"""

from __future__ import annotations

from engine_factories import alices_job, run

from gpu_worker.backends.numba_ptx import unlinked_call
from gpu_worker.exercise.labspec import find_lab

HALF_PRODUCTS = """\
from numba import cuda, float32


@cuda.jit
def dot16(x, y, out):
    t = cuda.threadIdx.x
    acc = float32(0.0)
    for j in range(16):
        i = cuda.blockIdx.x * 4096 + t + 256 * j
        acc += x[i] * y[i]  # a float16 product: numba-cuda's fp16 library
    if t == 0:
        out[cuda.blockIdx.x] = acc
"""


def test_a_float16_product_is_a_compile_error_that_says_convert_to_float32():
    outcome = run(alices_job(HALF_PRODUCTS, "numba", lab=find_lab("mixed-precision")))
    assert outcome.result.verdict == "compile_error"
    assert "convert each float16 to float32 (float32(h))" in outcome.result.message


def test_only_an_unresolved_extern_is_read_as_one_and_other_externs_are_named():
    assert unlinked_call("ptxas fatal   : Unresolved extern function '_ZmlRK6__halfS1_'") is not None
    assert "mystery" in str(unlinked_call("ptxas fatal   : Unresolved extern function 'mystery'"))
    assert unlinked_call("ptxas error   : Entry function uses too much shared data") is None
