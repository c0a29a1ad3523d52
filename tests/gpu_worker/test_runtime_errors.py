"""A kernel or module that fails while running gets runtime_error, at the learner's line."""

from __future__ import annotations

from engine_factories import alices_job, module_with, run

UNGUARDED = """
@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    c[i] = a[i] + b[i]
"""


def test_an_out_of_bounds_access_is_a_runtime_error_at_its_line():
    source = module_with("", UNGUARDED)
    result = run(alices_job(source)).result
    assert result.verdict == "runtime_error"
    assert "out-of-bounds load of 4 bytes: element 1000 of 'a'" in result.message  # the PTX executor's memcheck
    line = source.splitlines().index("    c[i] = a[i] + b[i]") + 1
    assert result.diagnostics[0].line == line


def test_a_module_that_exits_is_a_runtime_error():
    result = run(alices_job(module_with("import os\nos._exit(3)"))).result
    assert result.verdict == "runtime_error" and "exit status 3" in result.message


def test_a_module_that_crashes_the_interpreter_is_a_runtime_error():
    result = run(alices_job(module_with("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"))).result
    assert result.verdict == "runtime_error" and "signal 11" in result.message
