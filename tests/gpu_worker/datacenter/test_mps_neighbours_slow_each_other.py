"""Under MPS a GPU runs up to four jobs, each slowed by what its neighbours ask of the SMs and the bandwidth."""

from __future__ import annotations

import pytest

from gpu_worker.datacenter.mps import MpsLayout
from gpu_worker.datacenter.simulate import InvalidDecision, Replay, Rules, simulate
from gpu_worker.datacenter.trace import TraceJob, mps_trace
from gpu_worker.protocol import PolicySpec

MPS = Rules(gpus=1, sharing="mps")


def jcts(trace, schedule):
    return {j.id: round(schedule.finish[j.id] - j.submit, 6) for j in trace}


def side_by_side(queue, free, now):
    return [j.id if j.running else (j.id, 0) for j in queue]


def test_two_memory_bound_jobs_on_one_gpu_each_run_at_half_speed():
    trace = [TraceJob(0, 0.0, 1, 10.0, sm=0.5, bw=1.0), TraceJob(1, 0.0, 1, 10.0, sm=0.5, bw=1.0)]
    assert jcts(trace, simulate(trace, MPS, side_by_side)) == {0: 20.0, 1: 20.0}


def test_a_compute_bound_and_a_memory_bound_job_share_at_no_cost_while_the_sums_stay_under_one():
    trace = [TraceJob(0, 0.0, 1, 10.0, sm=0.7, bw=0.2), TraceJob(1, 0.0, 1, 6.0, sm=0.3, bw=0.8)]
    assert jcts(trace, simulate(trace, MPS, side_by_side)) == {0: 10.0, 1: 6.0}


def test_a_job_speeds_up_when_its_neighbour_ends():
    # together at 1 / 1.5 of full speed; job 1 needs 3 minutes of work: 4.5 minutes; then job 0 runs alone
    trace = [TraceJob(0, 0.0, 1, 10.0, sm=0.3, bw=0.75), TraceJob(1, 0.0, 1, 3.0, sm=0.3, bw=0.75)]
    assert jcts(trace, simulate(trace, MPS, side_by_side)) == {0: 11.5, 1: 4.5}


def test_a_bare_id_waits_for_an_empty_gpu_and_free_gpus_counts_empty_ones():
    seen = []

    def bare(queue, free, now):
        seen.append(free)
        return [j.id for j in queue]

    trace = [TraceJob(0, 0.0, 1, 10.0, sm=0.1, bw=0.1), TraceJob(1, 1.0, 1, 1.0, sm=0.1, bw=0.1)]
    assert jcts(trace, simulate(trace, MPS, bare)) == {0: 10.0, 1: 10.0}
    assert seen[:2] == [1, 0]


def test_a_fifth_job_does_not_fit_and_a_gpu_that_does_not_exist_is_refused():
    layout = MpsLayout(1)
    assert [layout.place_at(i, 0) for i in range(5)][-1] is None
    with pytest.raises(InvalidDecision, match="there is no GPU 3"):
        simulate([TraceJob(0, 0.0, 1, 1.0, 0.1, 0.1)], MPS, lambda queue, free, now: [(0, 3)])


def test_an_mps_trace_travels_as_rows_and_its_decisions_replay():
    trace = mps_trace(2, 60, 4, 0.8)
    assert [TraceJob.from_list(j.as_list()) for j in trace] == trace and all(j.gpus == 1 and j.bw for j in trace)
    rules = Rules(gpus=4, sharing="mps")
    first = simulate(trace, rules, lambda queue, free, now: [j.id if j.running else (j.id, j.id % 4) for j in queue])
    assert simulate(trace, rules, Replay(first.decisions)).finish == first.finish


def test_an_mps_lab_counts_client_places_and_is_not_preemptive():
    spec = {"gpus": 8, "sharing": "mps", "traces": [{"seed": 1}], "compare": ["gang"]}
    spec["goals"] = [{"metric": "mean_jct", "baseline": "gang"}]
    assert PolicySpec.model_validate(spec).capacity == 32
    with pytest.raises(ValueError, match="MPS is not preempted"):
        PolicySpec.model_validate({**spec, "preemptive": True})
