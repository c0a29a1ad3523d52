"""Every lab's CUDA C++ reference and sample submissions get, on the PTX executor, the verdict they must get.

The references must be accepted and meet their memory goals where the lab sets them; each sample's
`expected.yaml` names its verdict on a GPU, which the CPU tier must now match.
"""

from __future__ import annotations

import pytest
from lab_cases import judge

from gpu_worker.exercise.labspec import load_all

CASES = [
    pytest.param(lab, case, id=f"{lab.spec.slug}/{case.name}")
    for lab in load_all()[1]
    for case in lab.cases
    if case.language == "cuda" and case.verdict_on("sim") in ("accepted", "wrong_answer")
]


@pytest.mark.parametrize(("lab", "case"), CASES)
def test_the_sample_gets_its_verdict(lab, case):
    judged = judge(lab, case.source)
    assert judged.verdict == case.verdict_on("sim"), judged.message


def test_there_are_cuda_samples_of_both_verdicts():
    verdicts = {case.verdict_on("sim") for _, case in (p.values for p in CASES)}
    assert verdicts == {"accepted", "wrong_answer"} and len(CASES) >= 25
