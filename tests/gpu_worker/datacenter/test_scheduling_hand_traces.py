"""The simulator and the built-in policies on traces small enough to check by hand."""

from __future__ import annotations

import pytest

from gpu_worker.datacenter.metrics import jain_index, measure, nearest_rank
from gpu_worker.datacenter.policies import fifo, gandiva, gang, sjf, tiresias
from gpu_worker.datacenter.simulate import Rules, simulate
from gpu_worker.datacenter.trace import TraceJob


def jcts(trace, schedule):
    return {j.id: schedule.finish[j.id] - j.submit for j in trace}


# 4 GPUs: job 0 holds 2 for 10 min; job 1 needs all 4; job 2 needs 1 for 1 min.
BLOCKED = [TraceJob(0, 0.0, 2, 10.0), TraceJob(1, 1.0, 4, 5.0), TraceJob(2, 2.0, 1, 1.0)]


def test_strict_fifo_lets_a_big_job_at_the_head_block_a_small_one_that_fits():
    schedule = simulate(BLOCKED, Rules(gpus=4), fifo)
    assert jcts(BLOCKED, schedule) == {0: 10.0, 1: 14.0, 2: 14.0}  # job 2 waits for job 1, which waits for job 0


def test_gang_with_backfill_lets_the_small_job_pass_the_blocked_one():
    schedule = simulate(BLOCKED, Rules(gpus=4), gang)
    assert jcts(BLOCKED, schedule) == {0: 10.0, 1: 14.0, 2: 1.0}


def test_shortest_job_first_starts_the_shortest_waiting_job():
    trace = [TraceJob(0, 0.0, 1, 5.0), TraceJob(1, 1.0, 1, 9.0), TraceJob(2, 2.0, 1, 1.0)]
    schedule = simulate(trace, Rules(gpus=1), sjf)
    assert jcts(trace, schedule) == {0: 5.0, 1: 14.0, 2: 4.0}  # at minute 5, job 2 (1 min) goes before job 1


def test_tiresias_preempts_a_job_that_has_had_much_service_for_a_newcomer():
    # job 0 has 60 GPU-minutes at minute 60, past the first threshold (50): job 1 outranks it
    trace = [TraceJob(0, 0.0, 1, 100.0), TraceJob(1, 60.0, 1, 5.0)]
    schedule = simulate(trace, Rules(gpus=1, preemptive=True, restart_minutes=1.0), tiresias)
    assert jcts(trace, schedule) == {0: 106.0, 1: 5.0}  # 100 min of work, 5 min stopped, 1 min of restart
    assert schedule.preemptions == 1


def test_tiresias_keeps_jobs_of_one_queue_in_arrival_order():
    trace = [TraceJob(0, 0.0, 1, 30.0), TraceJob(1, 10.0, 1, 5.0)]  # job 0 has 10 GPU-minutes: same queue
    schedule = simulate(trace, Rules(gpus=1, preemptive=True), tiresias)
    assert jcts(trace, schedule) == {0: 30.0, 1: 25.0}
    assert schedule.preemptions == 0


def test_gandiva_takes_turns_one_slice_each_when_jobs_wait():
    trace = [TraceJob(0, 0.0, 1, 60.0), TraceJob(1, 0.0, 1, 60.0)]
    schedule = simulate(trace, Rules(gpus=1, preemptive=True, quantum_minutes=30.0, restart_minutes=0.0), gandiva)
    assert [(j, s, e) for j, s, e, _ in schedule.intervals] == [(0, 0, 30), (1, 30, 60), (0, 60, 90), (1, 90, 120)]
    assert schedule.preemptions == 2


def test_without_preemption_a_running_job_keeps_its_gpus_whatever_the_policy_answers():
    trace = [TraceJob(0, 0.0, 1, 10.0), TraceJob(1, 1.0, 1, 1.0)]
    schedule = simulate(trace, Rules(gpus=1), lambda queue, free, now: [j.id for j in reversed(queue)])
    assert jcts(trace, schedule) == {0: 10.0, 1: 10.0}


def test_the_metrics_of_a_schedule_read_as_computed_by_hand():
    schedule = simulate(BLOCKED, Rules(gpus=4), fifo)
    m = measure(BLOCKED, schedule, gpus=4)
    assert m.mean_jct == pytest.approx(38 / 3)
    assert m.p95_jct == 14.0
    assert m.makespan == 16.0
    assert m.utilisation == pytest.approx((2 * 10 + 4 * 5 + 1 * 1) / (4 * 16))
    speeds = [10 / 10, 5 / 14, 1 / 14]
    assert m.jain == pytest.approx(sum(speeds) ** 2 / (3 * sum(s * s for s in speeds)))


def test_p95_is_the_nearest_rank_and_jain_is_one_for_equal_shares():
    assert nearest_rank(list(range(1, 21)), 0.95) == 19
    assert nearest_rank([7.0], 0.95) == 7.0
    assert jain_index([0.5, 0.5, 0.5]) == pytest.approx(1.0)
    assert jain_index([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
