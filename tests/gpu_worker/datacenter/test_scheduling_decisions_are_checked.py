"""The simulator refuses decisions that could not happen, and a recorded schedule replays exactly."""

from __future__ import annotations

import pytest

from gpu_worker.datacenter.policies import BUILTINS
from gpu_worker.datacenter.simulate import InvalidDecision, Replay, ReplayExhausted, Rules, Stalled, as_ids, simulate
from gpu_worker.datacenter.trace import TraceJob, synthetic_trace

TWO = [TraceJob(0, 0.0, 1, 5.0), TraceJob(1, 1.0, 1, 5.0)]


@pytest.mark.parametrize(
    "answer",
    [[7], [0, 0], [True], ["0"], "0", 3, None, [1.5]],
    ids=["unknown-id", "twice", "bool", "string-id", "string", "int", "none", "float"],
)
def test_it_refuses_an_answer_that_is_not_a_list_of_distinct_queued_ids(answer):
    with pytest.raises(InvalidDecision):
        as_ids(answer, {0, 1})


def test_an_endless_generator_is_refused_once_it_repeats_an_id():
    def endless():
        while True:
            yield 0

    with pytest.raises(InvalidDecision):
        as_ids(endless(), {0})


def test_a_policy_that_never_starts_a_job_stalls_the_cluster():
    for preemptive in (False, True):
        with pytest.raises(Stalled):
            simulate(TWO, Rules(gpus=1, preemptive=preemptive), lambda queue, free, now: [])


def test_a_schedule_replayed_from_its_decisions_is_the_same_schedule():
    trace = synthetic_trace(3, 60, 16, load=1.5)
    rules = Rules(gpus=16, preemptive=True)
    original = simulate(trace, rules, BUILTINS["tiresias"].choose)
    replay = Replay(original.decisions)
    again = simulate(trace, rules, replay)
    assert again.finish == original.finish and again.intervals == original.intervals
    assert replay.used == len(original.decisions)


def test_a_replay_that_runs_out_of_decisions_says_so():
    decisions = simulate(TWO, Rules(gpus=1), BUILTINS["fifo"].choose).decisions
    with pytest.raises(ReplayExhausted):
        simulate(TWO, Rules(gpus=1), Replay(decisions[:1]))


def test_the_same_seed_gives_the_same_trace_and_every_job_fits_the_cluster():
    first, second = synthetic_trace(5, 300, 32), synthetic_trace(5, 300, 32)
    assert first == second != synthetic_trace(6, 300, 32)
    assert all(1 <= j.gpus <= 32 and j.duration > 0 for j in first)
    assert [j.submit for j in first] == sorted(j.submit for j in first)


def test_the_synthetic_trace_has_mostly_one_gpu_jobs_and_a_heavy_tail():
    trace = synthetic_trace(1, 1000, 32)
    durations = sorted(j.duration for j in trace)
    assert sum(j.gpus == 1 for j in trace) > 0.6 * len(trace)
    assert durations[-10] > 20 * durations[len(durations) // 2]  # the longest 1% run far longer than the median
