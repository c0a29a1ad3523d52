"""Every lab folder's sample submissions get the verdict (and the goals) their expected.yaml names, on the simulator.

vector-add's samples have their own, more detailed test file; this one covers every other lab, so
that a new lab folder is checked in CI the day it lands. The cases run with spare sandboxes, as a worker's
jobs do: the next case's sandbox starts while this one runs (this file, a third of the suite's wall time,
took a quarter less on 2 cores, 2026-12-07).
"""

from __future__ import annotations

import pytest
from engine_factories import alices_job, run

from gpu_worker.exercise.labspec import find_lab, load_all
from gpu_worker.isolation import spare

CASES = [(lab.spec.slug, case) for lab in load_all()[1] if lab.spec.slug != "vector-add" for case in lab.cases]


@pytest.fixture(scope="module", autouse=True)
def warm_sandboxes():
    """Spares on for this file, none left after it."""
    spare.shutdown()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(spare.ENV, "1")
        yield
    spare.shutdown()


def test_there_are_sample_cases_beyond_vector_add():
    assert len({slug for slug, _ in CASES}) >= 2


@pytest.mark.parametrize(("slug", "case"), CASES, ids=[f"{slug}/{case.name}" for slug, case in CASES])
def test_the_sample_gets_its_expected_verdict(slug, case):
    lab = find_lab(slug)
    outcome = run(alices_job(case.source, case.language, lab=lab))
    assert outcome.result.verdict == case.verdict_on("sim"), outcome.result.message
    goals_met = case.goals_met_on("sim", lab.spec.goals)
    if goals_met is not None:
        assert outcome.result.goals_met is goals_met, outcome.result.message
