"""A kernel that never ends is stopped at the wall-clock limit, and the next job runs normally."""

from __future__ import annotations

import time

from engine_factories import alices_job, module_with, processes_mentioning, run, unique_token

# A float64 `math.sin` calls libdevice's slow-path reduction, a function the PTX executor does not run: this
# kernel hangs on Numba's simulator (the fallback), where only the wall clock stops it. (On the executor an
# endless kernel ends sooner, at its instruction budget: test_a_cuda_kernels_fault_on_the_cpu_tier_names_its_line.py.)
HANGING = """
import math


@cuda.jit
def vector_add(a, b, c):
    c[0] = math.sin(a[0] * 1000.0)
    while True:
        pass
"""


def test_a_hanging_kernel_times_out_and_the_next_job_passes():
    token = unique_token()
    started = time.monotonic()
    result = run(
        alices_job(module_with(f'import subprocess\nsubprocess.Popen(["sleep", "{token}"])', HANGING), wall_seconds=3)
    ).result
    assert result.verdict == "timeout"
    assert "3 s" in result.message
    assert time.monotonic() - started < 3 + 2
    assert processes_mentioning(token) == []
    assert run(alices_job(module_with(""))).result.verdict == "accepted"
