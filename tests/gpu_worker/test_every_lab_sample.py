"""Every lab folder's sample submissions get the verdict (and the goals) their expected.yaml names, on the simulator.

vector-add's samples have their own, more detailed test file; this one covers every other lab, so
that a new lab folder is checked in CI the day it lands. The cases are judged as `check-labs --jobs 3` judges
them: three processes side by side, each with spare sandboxes as a worker's jobs have (the next case's sandbox
starts while this one runs). A case spends most of its second waiting on its sandbox, not on the CPU: one at a
time, this file was half of the engine's CI pass (335 s of 648 on 2 cores, 2026-12-07).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from collections.abc import Iterator

import pytest

from gpu_worker import cli
from gpu_worker.exercise.labspec import load_all
from gpu_worker.isolation import spare

SIDE_BY_SIDE = 3
CASES = [
    (lab.spec.slug, i, case)
    for lab in load_all()[1]
    if lab.spec.slug != "vector-add"
    for i, case in enumerate(lab.cases)
]


@pytest.fixture(scope="module")
def judged() -> Iterator[dict[tuple[str, int], cli._Checked]]:
    """Every case's outcome, judged once for the file (the processes' spares end with them)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(spare.ENV, "1")
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(SIDE_BY_SIDE, mp_context=context) as pool:
            futures = {
                (slug, i): pool.submit(cli._check_in_a_process, None, slug, i, "sim", False) for slug, i, _ in CASES
            }
            yield {key: future.result() for key, future in futures.items()}


def test_there_are_sample_cases_beyond_vector_add():
    assert len({slug for slug, _, _ in CASES}) >= 2


@pytest.mark.parametrize(("slug", "index"), [(s, i) for s, i, _ in CASES], ids=[f"{s}/{c.name}" for s, _, c in CASES])
def test_the_sample_gets_its_expected_verdict(judged, slug, index):
    checked = judged[(slug, index)]
    assert checked.ok, f"expected {checked.expected}, got {checked.got}: {checked.message}"
