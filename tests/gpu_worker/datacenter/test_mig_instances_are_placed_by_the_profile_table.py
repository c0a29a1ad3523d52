"""On a MIG cluster a job starts only where its profile may sit; a policy may place it, within H100's table."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gpu_worker.datacenter.mig import MigLayout
from gpu_worker.datacenter.policies import BUILTINS
from gpu_worker.datacenter.simulate import InvalidDecision, Replay, Rules, simulate
from gpu_worker.datacenter.trace import MIG_MIX, TraceJob, synthetic_trace
from gpu_worker.protocol import PREEMPTIVE_BUILTINS, PolicySpec

# One GPU: a 1g for 60 minutes, then a 4g, then a 2g.
ONE_G_THEN_FOUR_G = [TraceJob(0, 0.0, 1, 60.0), TraceJob(1, 1.0, 4, 10.0), TraceJob(2, 2.0, 2, 10.0)]


def jcts(trace, schedule):
    return {j.id: schedule.finish[j.id] - j.submit for j in trace}


def test_first_fit_puts_a_1g_at_slice_0_where_a_4g_must_start():
    schedule = simulate(ONE_G_THEN_FOUR_G, Rules(gpus=1, sharing="mig"), lambda queue, free, now: [j.id for j in queue])
    assert jcts(ONE_G_THEN_FOUR_G, schedule)[1] == 69.0  # 6 of 7 compute slices free, and no room for a 4g


def test_a_1g_placed_at_the_end_of_the_gpu_leaves_room_for_the_4g():
    def at_the_end(queue, free, now):
        return [(j.id, 0, 6) if j.gpus == 1 and not j.running else j.id for j in queue]

    schedule = simulate(ONE_G_THEN_FOUR_G, Rules(gpus=1, sharing="mig"), at_the_end)
    assert jcts(ONE_G_THEN_FOUR_G, schedule) == {0: 60.0, 1: 10.0, 2: 10.0}  # 4g at 0-3, 2g at 4-5, 1g at 6


def test_a_running_jobs_view_says_where_it_sits_and_free_gpus_counts_compute_slices():
    seen, free_counts = [], []

    def record(queue, free, now):
        seen.extend((j.id, j.placement) for j in queue)
        free_counts.append(free)
        return [j.id for j in queue]

    simulate(ONE_G_THEN_FOUR_G, Rules(gpus=1, sharing="mig"), record)
    assert seen[:3] == [(0, None), (0, (0, 0)), (1, None)]
    assert free_counts[:2] == [7, 6]


@pytest.mark.parametrize(
    ("place", "message"),
    [((0, 2), "3g instance may start only at memory slice 0 or 4, not 2"), ((1, 0), "there is no GPU 1")],
)
def test_a_place_the_profile_cannot_take_is_an_invalid_decision(place, message):
    trace = [TraceJob(0, 0.0, 3, 5.0)]
    with pytest.raises(InvalidDecision, match=message):
        simulate(trace, Rules(gpus=1, sharing="mig"), lambda queue, free, now: [(0, *place)])


def test_placed_decisions_replay_to_the_same_schedule():
    trace = synthetic_trace(3, 80, 14, 1.5, MIG_MIX)
    rules = Rules(gpus=2, sharing="mig")

    def high_starts(queue, free, now):
        layout = MigLayout(2)
        for j in queue:
            if j.running:
                layout.place_at(j.id, j.gpus, *j.placement)
        chosen = []
        for j in queue:
            where = None if j.running else layout.place(j.id, j.gpus)
            chosen.append(j.id if where is None else (j.id, *where))
        return chosen

    first = simulate(trace, rules, high_starts)
    again = simulate(trace, rules, Replay(first.decisions))
    assert again.finish == first.finish and any(not isinstance(c, int) for d in first.decisions for c in d)


def test_a_mig_lab_is_not_preemptive_and_compares_no_preemptive_builtin():
    base = {"gpus": 4, "sharing": "mig", "traces": [{"seed": 1}], "goals": [{"metric": "mean_jct", "baseline": "fifo"}]}
    assert PolicySpec.model_validate({**base, "compare": ["fifo", "gang"]}).capacity == 28
    with pytest.raises(ValidationError, match="tiresias"):
        PolicySpec.model_validate(base)  # the default comparison holds Tiresias and Gandiva
    with pytest.raises(ValidationError, match="not preempted"):
        PolicySpec.model_validate({**base, "compare": ["fifo"], "preemptive": True})


def test_the_protocols_list_of_preemptive_builtins_is_the_policies_own():
    assert set(PREEMPTIVE_BUILTINS) == {name for name, b in BUILTINS.items() if b.preemptive}
