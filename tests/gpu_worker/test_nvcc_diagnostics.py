"""nvcc's messages become diagnostics in the learner's file, without echoing any included file."""

from __future__ import annotations

from gpu_worker.backends.nvcc import parse_diagnostics

SOURCE = "__global__ void k(float* c)\n{\n    c[0] = 1.0f\n}\n"


def test_a_missing_semicolon_is_placed_at_the_end_of_the_line_that_lacks_it():
    text = (
        'submission.cu(4): error: expected a ";"\n  }\n  ^\n\n1 error detected in the compilation of "submission.cu".\n'
    )
    (d,) = parse_diagnostics(text, SOURCE)
    assert (d.line, d.column, d.message) == (3, 16, 'expected a ";"')


def test_other_errors_keep_nvccs_line_and_caret_column():
    text = 'submission.cu(3): error: identifier "x" is undefined\n      c[0] = x;\n             ^\n'
    (d,) = parse_diagnostics(text, SOURCE)
    assert (d.line, d.column) == (3, 12)


def test_warnings_are_kept_as_warnings():
    text = 'submission.cu(2): warning #177-D: variable "y" was declared but never referenced\n'
    (d,) = parse_diagnostics(text, SOURCE)
    assert d.severity == "warning" and d.line == 2


def test_errors_inside_an_included_host_file_are_reported_without_their_text():
    source = '#include "/etc/passwd"\n' + SOURCE
    text = (
        "/etc/passwd(1): error: this declaration has no storage class or type specifier\n"
        "  root:x:0:0:root:/root:/bin/bash\n  ^\n\n"
        "In file included from submission.cu:1:\n"
        "/root/.bashrc:1:3: error: invalid preprocessing directive #~\n"
        "    1 | # ~/.bashrc: executed by bash(1) for non-login shells.\n"
    )
    diagnostics = parse_diagnostics(text, source)
    assert len(diagnostics) == 1 and diagnostics[0].line == 1
    assert "root" not in diagnostics[0].model_dump_json() and "bashrc" not in diagnostics[0].model_dump_json()


def test_errors_in_the_toolkits_own_headers_keep_their_message():
    text = "/usr/local/cuda/include/cuda_fp16.h(12): error: something about half\n"
    (d,) = parse_diagnostics(text, SOURCE)
    assert "something about half" in d.message and d.line is None


def test_preprocessor_errors_in_the_learners_file_keep_line_and_column():
    (d,) = parse_diagnostics("submission.cu:1:10: fatal error: nothere.h: No such file or directory\n", SOURCE)
    assert (d.line, d.column) == (1, 10) and "nothere.h" in d.message
