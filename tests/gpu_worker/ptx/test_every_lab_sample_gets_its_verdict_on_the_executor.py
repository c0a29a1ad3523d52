"""Every lab's CUDA C++ and Numba reference and sample submissions get, on the PTX executor, their verdict.

The references must be accepted and meet their memory goals where the lab sets them; each sample's
`expected.yaml` names its verdict on a GPU, which the CPU tier must now match.
"""

from __future__ import annotations

import pytest
from lab_cases import compile_numba, judge

from gpu_worker.exercise.labspec import load_all

CASES = [
    pytest.param(lab, case, id=f"{lab.spec.slug}/{case.name}")
    for lab in load_all()[1]
    for case in lab.cases
    if case.language in ("cuda", "numba") and case.verdict_on("sim") in ("accepted", "wrong_answer")
]


@pytest.fixture(scope="module", autouse=True)
def numba_ptx_made_once():
    compile_numba([(lab, case.source) for lab, case in (p.values for p in CASES) if case.language == "numba"])


@pytest.mark.parametrize(("lab", "case"), CASES)
def test_the_sample_gets_its_verdict(lab, case):
    judged = judge(lab, case.source, case.language)
    assert judged.verdict == case.verdict_on("sim"), judged.message


def test_there_are_samples_of_both_verdicts_in_both_languages():
    found = {(case.language, case.verdict_on("sim")) for _, case in (p.values for p in CASES)}
    assert found == {(lang, v) for lang in ("cuda", "numba") for v in ("accepted", "wrong_answer")}
    assert len(CASES) >= 80
