"""On the CPU tier a lab whose grid rounds up (`ceil_div`) runs, at one size at least, several blocks and a
partial last one, so a submission's guard runs on the executor as it will on a GPU (issue 27, item 5).

The exceptions are by design and named here with their reason; a lab whose grid divides exactly (`n // k`)
asks for a multiple in its README and is not held to this.
"""

from __future__ import annotations

import math
import re

import pytest

from gpu_worker.exercise.formula import size_value
from gpu_worker.exercise.labspec import load_all
from gpu_worker.exercise.launch import resolve_launch

EXACT_BY_DESIGN = {
    "divergence": "n is a multiple of 64: the goal counts 32 active lanes at every warp's store",
    "transpose": "n is a multiple of the 32 x 32 tile: the reference's tiles have no guard",
    "coalescing": "n is a multiple of 32: the report reads a whole warp's 32 sectors against 4, the lesson's numbers",
}
ROUNDED_UP = re.compile(r"ceil_div\(([^,]+),\s*([^)]+)\)")


def _rounded_up_labs() -> list:
    return [
        pytest.param(lab, id=lab.spec.slug)
        for lab in load_all()[1]
        if "sim" in lab.spec.sizes and any("ceil_div" in g for g in lab.spec.harness().launch.grid)
    ]


@pytest.mark.parametrize("lab", _rounded_up_labs())
def test_the_cpu_tier_runs_several_blocks_and_a_partial_last_one(lab) -> None:
    harness = lab.spec.harness()
    if lab.spec.slug in EXACT_BY_DESIGN:
        pytest.skip(EXACT_BY_DESIGN[lab.spec.slug])
    exercised = []
    for sizes in harness.sizes["sim"]:
        blocks = math.prod(resolve_launch(harness.launch, sizes).grid)
        rounded = [pair for formula in harness.launch.grid for pair in ROUNDED_UP.findall(formula)]
        partial = any(size_value(extent, sizes) % size_value(per_block, sizes) for extent, per_block in rounded)
        exercised.append(blocks >= 2 and partial)
    assert any(exercised), f"{lab.spec.slug}: no size of {harness.sizes['sim']} has several blocks, the last partial"
