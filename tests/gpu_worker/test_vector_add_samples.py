"""The vector-add lab's sample submissions get the verdicts their expected.yaml names, on the simulator."""

from __future__ import annotations

import functools

import pytest
from engine_factories import Run, alices_job, run, vector_add_lab

CASES = {case.name: case for case in vector_add_lab().cases}


@functools.cache
def sample_run(name: str) -> Run:
    case = CASES[name]
    return run(alices_job(case.source, case.language))


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_sample_gets_its_expected_verdict(name):
    assert sample_run(name).result.verdict == CASES[name].verdict_on("sim"), sample_run(name).result.message


def test_the_numba_syntax_error_points_at_line_7():
    (diagnostic,) = sample_run("syntax-error-numba").result.compile.diagnostics
    assert diagnostic.line == 7
    assert "SyntaxError" in diagnostic.message


def test_the_cuda_missing_semicolon_points_at_line_5_where_it_is_missing():
    diagnostic = sample_run("syntax-error-cuda").result.compile.diagnostics[0]
    assert (diagnostic.line, diagnostic.message) == (5, 'expected a ";"')
    assert diagnostic.column == len("        c[i] = a[i] + b[i]") + 1


def test_the_off_by_one_kernel_is_shown_the_element_it_never_wrote():
    check = sample_run("off-by-one").result.check
    assert check.mismatch_count == 1
    assert check.mismatches[0].index == 999
    assert "never written" in check.mismatches[0].note


def test_cuda_cpp_on_the_cpu_tier_runs_its_ptx_on_the_executor_and_says_so():
    result = sample_run("reference-cuda").result
    assert result.verdict == "accepted" and len(result.checks) == 1
    assert result.device.startswith("CPU tier: PTX executor")
    assert result.memory["model"].startswith("PTX executor")
    assert result.compile.registers and result.compile.registers > 0
    assert result.compile.spill_bytes == 0 and result.compile.entry_symbol == "vector_add"
    assert ".entry vector_add" in result.compile.ptx_excerpt


def test_a_numba_kernel_is_compiled_for_sm_90_and_measured_by_ptxas():
    compiled = sample_run("reference-numba").result.compile
    assert compiled.arch == "sm_90" and "ptxas" in compiled.tool
    assert compiled.registers and compiled.registers > 0
    assert compiled.shared_bytes == 0 and compiled.spill_bytes == 0
    assert ".entry vector_add(" in compiled.ptx_excerpt
