"""Nsight Compute on the GPU: alice's vector-add reference profiled once, its counters as the physics says.

Run on the device tool; `WARPLAB_NCU_KEEP=$OUT` brings the raw CSVs back (the
real fixture for tests/gpu_worker/test_ncu_parse.py).
"""

from __future__ import annotations

import json

import pytest
from engine_factories import alices_job, vector_add_lab

from gpu_worker import profiling
from gpu_worker.backends import device_name
from gpu_worker.engine import run_profile
from gpu_worker.exercise import plan, profiled_goals
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.protocol import Job

pytestmark = pytest.mark.gpu


def _job(language: str) -> tuple[Job, list, dict]:
    """Alice's vector-add reference, its GPU runs and the child's request as the engine builds it (run_job)."""
    job = alices_job(vector_add_lab().references[language], language)
    runs = plan.runs(job, "cuda")
    for r in runs:
        r.pop("threads_per_block", None)
    request = {
        "backend": "cuda",
        "language": language,
        "source": job.source,
        "entry": job.exercise.entry,
        "args": [a.model_dump() for a in job.exercise.harness.args_for(language)],
        "runs": runs,
        "measure": True,
    }
    return job, runs, request


def _profile(language: str) -> tuple[dict, list, int]:
    job, runs, request = _job(language)
    events: list = []
    facts = profiling.profile_job(
        job, runs, request, job.exercise.limits, lambda kind, **f: events.append((kind, f)), device=device_name("cuda")
    )
    assert facts is not None
    print(json.dumps(facts, indent=1, default=str))  # pytest -s shows what ncu said
    return facts, events, runs[facts["index"]]["sizes"]["n"]


@pytest.mark.parametrize("language", ["cuda", "numba"])
def test_alices_vector_add_is_profiled_with_the_counters_the_physics_predicts(language):
    facts, events, n = _profile(language)
    assert facts["available"], f"{facts.get('reason')}: {facts.get('detail', '')}"
    assert events == [("profile", facts)]
    assert n == 16_777_213  # the largest size
    assert 0 < facts["achieved_occupancy"] <= 100
    assert facts["dram_bytes"] == pytest.approx(12 * n, rel=0.10)
    assert facts["global_load_sectors_per_request"] == pytest.approx(4, abs=0.05)
    assert facts["global_store_sectors_per_request"] == pytest.approx(4, abs=0.05)
    assert facts["shared_load_ways"] is None  # vector add uses no shared memory
    assert facts["excess_traffic"] is None
    assert facts["source"].startswith("Nsight Compute 20")
    assert facts["explanations"] and all(s.endswith(".") for s in facts["explanations"])


def test_alices_vector_add_goals_profile_reads_four_sectors_per_request_with_their_counters_alone():
    job, runs, request = _job("cuda")
    facts = profiling.profile_goals(job, runs, request, lambda kind, **f: None, device=device_name("cuda"))
    assert facts is not None and facts["available"], f"{facts.get('reason')}: {facts.get('detail', '')}"
    assert facts["index"] == len(runs) - 1  # vector-add's roof goal names no size: the largest
    assert facts["achieved_occupancy"] is None and facts["dram_bytes"] is None  # no section, no other counter
    record = profiled_goals.record(profiled_goals.profiled(job.exercise.harness.goals), facts)
    (goal,) = record["goals"]
    assert goal["measured"] == pytest.approx(4, abs=0.05) and goal["met"] is True, goal
    assert record["source"].startswith("Nsight Compute 20") and " on " in record["source"]


def _divergence_lanes(source: str, language: str) -> dict:
    """The divergence lab's `source` profiled for its goals on the GPU: the counters, then the source counters."""
    lab = find_lab("divergence")
    job = alices_job(source, language, lab=lab)
    facts = run_profile(job, lambda event: None, "cuda", for_goals=True)
    assert facts is not None and facts["available"], facts
    print(json.dumps(facts.get("lanes"), indent=1))  # pytest -s shows the sites ncu's source page gave
    return profiled_goals.record(profiled_goals.profiled(lab.spec.goals), facts)


@pytest.mark.parametrize("language", ["cuda", "numba"])
def test_a_reference_whose_warps_each_run_one_path_keeps_32_lanes_at_every_global_site(language):
    record = _divergence_lanes(find_lab("divergence").references[language], language)
    (goal,) = record["goals"]
    assert goal["measured"] == pytest.approx(32, abs=0.1) and goal["met"] is True, goal


def test_a_warp_split_between_two_paths_reads_16_lanes_from_the_source_page():
    case = next(c for c in find_lab("divergence").cases if c.name == "in-warp-branch")
    record = _divergence_lanes(case.source, case.language)
    (goal,) = record["goals"]
    # The CPU tier's 16; ptxas could merge the two paths' stores into one after the branch (32 there) or
    # if-convert them: this is what the GPU run settles.
    assert goal["measured"] == pytest.approx(16, abs=0.5) and goal["met"] is False, goal
