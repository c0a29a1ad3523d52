"""An `#include` of a host file leaks nothing of it, in the diagnostics or anywhere else."""

from __future__ import annotations

import pytest
from engine_factories import alices_job, run

KERNEL = 'extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {}\n'


@pytest.mark.parametrize("path", ["/etc/passwd", "/etc/shadow", "/root/.bashrc", "/proc/self/environ"])
def test_an_include_of_a_host_file_leaks_nothing(path):
    outcome = run(alices_job(f'#include "{path}"\n{KERNEL}', "cuda"))
    # /proc/self/environ reads as empty to cpp: the empty kernel compiles, runs on the executor, writes nothing
    assert outcome.result.verdict in ("compile_error", "wrong_answer")
    everything = outcome.json()
    assert "root:" not in everything and "nobody:" not in everything and "PATH=" not in everything
    assert all(d.line == 1 for d in outcome.result.compile.diagnostics)
