"""On the sim backend a Triton kernel is compiled for sm_90 and its PTX run by the executor, labelled so;
the learner's module is never imported where the outputs are made."""

from __future__ import annotations

from engine_factories import alices_job, run, vector_add_lab

LAB = vector_add_lab()


def test_the_reference_is_accepted_with_the_executor_named_and_no_timing():
    outcome = run(alices_job(LAB.references["triton"], "triton"))
    result = outcome.result
    assert result.verdict == "accepted", result.message
    assert result.device.startswith("CPU tier: PTX executor") and result.executed_by == "ptx_executor"
    assert result.compile is not None and "PTX executor (CPU)" in result.compile.tool
    assert result.compile.registers and result.timing is None
    # Each tl.load is one access per warp (four word loads a thread, sharing their sectors): coalesced, goal met.
    assert [(g["metric"], g["met"]) for g in result.goals] == [("sectors_per_request", True)] and result.goals_met
    assert result.memory is not None and [r["sectors_per_request"] for r in result.memory["lines"]] == [3.91] * 3
    assert any(note.startswith("memory report per tl.load and tl.store") for note in result.compile.notes)
    occupancy = next(e for e in outcome.events if e.type == "occupancy")
    assert occupancy.model_extra["label"].startswith("PTX executor (CPU)")


def test_a_kernel_that_stores_the_wrong_value_is_a_wrong_answer():
    wrong = LAB.references["triton"].replace("x + y, mask=mask)", "x, mask=mask)")
    outcome = run(alices_job(wrong, "triton"))
    assert outcome.result.verdict == "wrong_answer" and outcome.result.executed_by == "ptx_executor"


def test_a_numba_kernel_submitted_as_triton_is_a_compile_error_on_its_import():
    outcome = run(alices_job(LAB.references["numba"], "triton"))
    assert outcome.result.verdict == "compile_error"
    assert outcome.result.compile is not None and outcome.result.compile.diagnostics[0].line == 1
