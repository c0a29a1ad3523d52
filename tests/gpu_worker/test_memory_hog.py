"""A learner who allocates 10 GB hits the job's memory limit, not the machine's."""

from __future__ import annotations

from engine_factories import alices_job, module_with, run


def test_a_huge_allocation_is_a_runtime_error_that_names_memory():
    result = run(alices_job(module_with("import numpy as np\nhog = np.ones(10 * 1024**3 // 8)"))).result
    assert result.verdict == "runtime_error"
    assert "memory" in result.message.lower()
    assert result.diagnostics[0].line == 3
