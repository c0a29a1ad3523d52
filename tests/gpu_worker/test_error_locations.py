"""Python and Numba errors are located in the learner's own file, not in Numba's internals."""

from __future__ import annotations

from gpu_worker.exercise.diagnostics import from_exception, from_numba_error

PATH = "/tmp/job-x/submission.py"


def test_a_syntax_error_keeps_its_line_and_column():
    try:
        compile("def f(:\n    pass\n", PATH, "exec")
    except SyntaxError as exc:
        d = from_exception(exc, PATH)
    assert d.line == 1 and d.column and d.message.startswith("SyntaxError")


def test_a_runtime_exception_is_placed_at_the_innermost_learner_frame():
    code = compile("def f(x):\n    return x[5]\n\nf([])\n", PATH, "exec")
    try:
        exec(code, {})
    except IndexError as exc:
        d = from_exception(exc, PATH)
    assert d.line == 2 and d.message == "IndexError: list index out of range"


def test_a_numba_error_is_placed_at_the_line_numba_names_and_loses_its_noise():
    text = (
        "Failed in cuda mode pipeline (step: nopython frontend)\nUnknown attribute 'x' of type float32\n\n"
        'File "submission.py", line 8:\ndef k(a):\n    <source elided>\n    a[0].x\n    ^\n\n'
        "During: typing of get attribute at /tmp/job-x/submission.py (8)\n"
    )
    d = from_numba_error(RuntimeError(text), PATH, "")
    assert d.line == 8 and d.message == "RuntimeError: Unknown attribute 'x' of type float32"


def test_an_undefined_name_is_found_in_the_source_when_numba_names_no_line():
    source = "from numba import cuda\n\n@cuda.jit\ndef k(a):\n    a[0] = foo  # here\n"
    text = (
        "Failed in cuda mode pipeline (step: nopython frontend)\nNameError: name 'foo' is not defined\nDuring: Pass x"
    )
    d = from_numba_error(RuntimeError(text), PATH, source)
    assert d.line == 5 and "NameError: name 'foo' is not defined" in d.message
