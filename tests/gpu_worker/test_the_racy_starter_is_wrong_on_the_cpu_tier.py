"""shared-race's starter (no barrier between the shared-memory write and the read) is wrong on the CPU tier,
and the PTX executor's memory report names the race on the line that reads.

Not a sample case: on a GPU the race may or may not show, so no verdict could be promised there.
"""

from __future__ import annotations

from engine_factories import alices_job, run

from gpu_worker.exercise.labspec import find_lab


def test_alices_unsynchronised_reversal_reads_slots_no_thread_has_written_yet():
    lab = find_lab("shared-race")
    outcome = run(alices_job(lab.starters["numba"], "numba", lab=lab))
    assert outcome.result.verdict == "wrong_answer", outcome.result.message
    (race,) = outcome.result.memory["hazards"]
    read = next(n for n, text in enumerate(lab.starters["numba"].splitlines(), 1) if "tile[THREADS - 1 - t]" in text)
    assert race["kind"] == "race" and race["line"] == read
    assert "syncthreads()" in race["message"]
