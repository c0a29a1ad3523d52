"""A kernel that never ends is stopped at the wall-clock limit, and the next job runs normally."""

from __future__ import annotations

import time

from engine_factories import alices_job, module_with, processes_mentioning, run, unique_token

# Module-level code that never ends (the module rules off, as `module_with` asks): the child imports the module
# and hangs there, where only the wall clock stops it. (An endless kernel ends sooner, at the executor's
# instruction budget: test_a_cuda_kernels_fault_on_the_cpu_tier_names_its_line.py.)
HANGING = "while True:\n    pass\n"


def test_a_hanging_kernel_times_out_and_the_next_job_passes():
    token = unique_token()
    started = time.monotonic()
    result = run(
        alices_job(module_with(f'import subprocess\nsubprocess.Popen(["sleep", "{token}"])\n{HANGING}'), wall_seconds=3)
    ).result
    assert result.verdict == "timeout"
    assert "3 s" in result.message
    assert time.monotonic() - started < 3 + 2
    assert processes_mentioning(token) == []
    assert run(alices_job(module_with(""))).result.verdict == "accepted"
