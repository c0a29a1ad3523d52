"""The learner's CUDA Python is imported and compiled only in its compile process, which hands back PTX.

The measuring process loads that PTX and passes Numba's flat kernel parameters
itself (`numba_abi`): these tests hold the compile process's answer and the
parameter layout to what the measuring side relies on, on the CPU.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from gpu_worker.backends import compile_server, numba_abi
from gpu_worker.exercise.labspec import find_lab


def _compile(tmp_path: Path, source: str, lab: str = "vector-add") -> tuple[dict, list]:
    args = find_lab(lab).exercise_ref("numba").harness.args_for("numba")
    path = tmp_path / "submission.py"
    path.write_text(textwrap.dedent(source))
    server = compile_server.CompileServer()
    try:
        server.compile(path, "vector_add" if lab == "vector-add" else "transpose", args, (9, 0))
        return server.result(timeout=120), args
    finally:
        server.stop()


CORRECT = """
from numba import cuda

@cuda.jit(max_registers=16)
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
"""


@pytest.fixture(scope="module")
def correct(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, list]:
    return _compile(tmp_path_factory.mktemp("correct"), CORRECT)


def test_it_hands_back_ptx_whose_parameters_follow_numba_s_kernel_abi(correct: tuple[dict, list]) -> None:
    found, args = correct
    assert found["ok"], found
    assert found["symbol"] in found["ptx"]
    numba_abi.check_parameters(found["ptx"], found["symbol"], args)  # raises when the layout differs
    assert len(numba_abi.expected_widths(args)) == 3 * 7  # three 1-D arrays: 5 + 2 * 1 parameters each


def test_it_keeps_the_kernel_s_register_cap_in_the_ptx_it_hands_back(correct: tuple[dict, list]) -> None:
    found, _ = correct
    assert ".maxnreg 16" in found["ptx"]
    assert found["max_registers"] == 16
    assert found["info"]["registers"] <= 16


def test_a_parameter_list_of_another_shape_is_our_fault_not_a_wrong_answer(correct: tuple[dict, list]) -> None:
    found, args = correct
    with pytest.raises(numba_abi.AbiMismatch):
        numba_abi.check_parameters(found["ptx"], found["symbol"], args[:2])


def test_a_module_that_runs_code_at_import_is_a_compile_error_on_its_line(tmp_path: Path) -> None:
    found, _ = _compile(tmp_path, "import cupy\n" + CORRECT)
    assert not found["ok"]
    err = compile_server.learner_error(found, "numba-cuda", "sm_90")
    assert err is not None and err.verdict == "compile_error"
    assert err.diagnostics[0].line == 1
    assert "cannot be imported" in err.message


def test_a_typing_error_is_a_compile_error_on_the_learner_s_line(tmp_path: Path) -> None:
    found, _ = _compile(tmp_path, CORRECT.replace("a[i] + b[i]", "a[i] + undefined_name"))
    err = compile_server.learner_error(found, "numba-cuda", "sm_90")
    assert err is not None and err.verdict == "compile_error"
    assert err.diagnostics[0].line == 8


def test_the_compile_process_yields_the_cpu_to_the_measuring_process():
    server = compile_server.CompileServer()
    try:
        assert os.getpriority(os.PRIO_PROCESS, server.proc.pid) == os.nice(0) + compile_server.COMPILE_NICE
    finally:
        server.stop()


def test_a_server_let_go_unused_ends_by_itself_and_takes_no_request() -> None:
    server = compile_server.CompileServer()
    server.abandon()  # what a CUDA C++ job does with its spare's server: no waiting for Numba's import
    assert server.proc.wait(timeout=120) is not None  # killed here (same uid), or ended on its closed pipe
    with pytest.raises(RuntimeError, match="one request"):
        server.compile(Path("unused.py"), "vector_add", [], (9, 0))
