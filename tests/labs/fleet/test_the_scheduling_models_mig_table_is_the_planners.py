"""Module 6's MIG scheduling model places instances by the same H100 table the fleet planner lays GPUs out with."""

from __future__ import annotations

from gpu_worker.datacenter import mig
from labs.fleet.mig_profiles import BY_KEY


def test_every_profile_the_model_knows_has_the_planners_memory_slices_and_starts():
    planner = {
        p.compute_slices: (p.memory_slices, p.starts)
        for p in BY_KEY["h100-80gb"].profiles
        if not p.media and not (p.compute_slices == 1 and p.memory_slices == 2)  # the model leaves out 1g.20gb
    }
    assert planner == mig.PROFILES
    assert (mig.COMPUTE_SLICES, mig.MEMORY_SLICES) == (7, 8)
