"""A learner who prints 10 MB gets the first MiB back, marked as truncated."""

from __future__ import annotations

from engine_factories import alices_job, module_with, run


def test_a_flood_of_output_is_truncated_to_the_limit():
    result = run(alices_job(module_with('import sys\nsys.stdout.write("x" * (10 * 1024 * 1024))'))).result
    assert result.output_truncated is True
    assert 0 < len(result.output.encode()) <= 1024 * 1024
    assert result.verdict == "accepted"
