"""Code a GPU could not compile is a compile_error at the learner's line, even though the simulator would run it."""

from __future__ import annotations

from engine_factories import alices_job, module_with, run


def test_a_numba_typing_error_points_at_the_learners_line():
    kernel = """
    @cuda.jit
    def vector_add(a, b, c):
        i = cuda.grid(1)
        if i < c.size:
            c[i] = a[i].imaginary_part + b[i]
    """
    source = module_with("", kernel)
    outcome = run(alices_job(source))
    result = outcome.result
    assert result.verdict == "compile_error"
    assert [e.type for e in outcome.events] == ["started", "compile_error", "done"]
    (diagnostic,) = result.compile.diagnostics
    assert diagnostic.line == len(source.rstrip().splitlines())
    assert "imaginary_part" in diagnostic.message and "During:" not in diagnostic.message


def test_a_kernel_with_the_wrong_parameters_is_a_compile_error_that_lists_the_exercises():
    kernel = """
    @cuda.jit
    def vector_add(a, b):
        pass
    """
    result = run(alices_job(module_with("", kernel))).result
    assert result.verdict == "compile_error"
    assert "takes 2 parameters; this exercise passes 3: (a, b, c)" in result.message


def test_a_cuda_undefined_identifier_points_at_its_line_and_column():
    source = (
        'extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)\n{\n    c[0] = d;\n}\n'
    )
    result = run(alices_job(source, "cuda")).result
    assert result.verdict == "compile_error"
    diagnostic = result.compile.diagnostics[0]
    assert (diagnostic.line, diagnostic.column) == (3, 12) and 'identifier "d" is undefined' in diagnostic.message
