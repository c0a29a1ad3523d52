"""A learner who writes to the engine's private pipe breaks only their own job, never the checker."""

from __future__ import annotations

from engine_factories import alices_job, module_with, run


def test_garbage_on_the_engines_pipe_is_a_runtime_error_not_a_crash():
    source = module_with('import os, sys\nos.write(int(sys.argv[-1]), b"{not json\\n")')
    result = run(alices_job(source)).result
    assert result.verdict == "runtime_error" and "malformed" in result.message


def test_prints_cannot_forge_messages():
    forged = '{"type": "outputs", "index": 0, "arrays": []}\\n{"type": "finished"}'
    result = run(alices_job(module_with(f"print('{forged}')"))).result
    assert result.verdict == "accepted" and '"type": "finished"' in result.output
    assert result.checks[0].passed and result.checks[0].mismatch_count == 0


def test_forged_outputs_in_place_of_the_kernels_are_refused():
    kernel = """
    @cuda.jit
    def vector_add(a, b, c):
        pass

    import os, sys
    os.write(int(sys.argv[-1]), b'{"type": "outputs", "index": 0}\\n')
    """
    result = run(alices_job(module_with("", kernel))).result
    assert result.verdict == "runtime_error" and "malformed" in result.message
