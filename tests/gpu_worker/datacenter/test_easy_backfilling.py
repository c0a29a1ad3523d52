"""EASY backfilling passes a blocked head only with jobs that cannot delay its reservation."""

from __future__ import annotations

import pytest

from gpu_worker.datacenter.metrics import measure
from gpu_worker.datacenter.policies import BUILTINS, easy, fifo, gang, shadow_time
from gpu_worker.datacenter.simulate import Rules, simulate
from gpu_worker.datacenter.trace import TraceJob, synthetic_trace
from gpu_worker.protocol import BUILTIN_NAMES

# 8 GPUs. Job 0 holds 5 until minute 10, so the head, job 1 (6 GPUs), can start at 10 (its shadow time)
# with 2 GPUs to spare (the extra GPUs). Three jobs could use the 3 free GPUs before then:
# job 2 (3 GPUs, 30 min) would still hold them at 10; job 3 (1 GPU, 30 min) fits in the extra GPUs;
# job 4 (2 GPUs, 4 min) is done by minute 8.
WIDE_HEAD = [
    TraceJob(0, 0.0, 5, 10.0),
    TraceJob(1, 1.0, 6, 5.0),
    TraceJob(2, 2.0, 3, 30.0),
    TraceJob(3, 3.0, 1, 30.0),
    TraceJob(4, 4.0, 2, 4.0),
]
SYNTHETIC = [(1, 1.5), (4, 1.5)]  # head-of-line's traces: seed, offered load, on 32 GPUs


def starts(policy, trace=WIDE_HEAD, rules=Rules(gpus=8)):
    schedule = simulate(trace, rules, policy)
    first: dict[int, float] = {}
    for job, start, _, _ in schedule.intervals:
        first.setdefault(job, start)
    return first


def test_strict_fifo_leaves_gpus_idle_behind_the_wide_head():
    assert starts(fifo) == {0: 0.0, 1: 10.0, 2: 15.0, 3: 15.0, 4: 15.0}  # 3 GPUs idle from minute 0 to 10


def test_easy_backfills_a_short_job_that_ends_before_the_shadow_time():
    assert starts(easy)[4] == 4.0


def test_easy_refuses_a_long_job_that_would_still_hold_gpus_the_head_needs():
    assert starts(easy)[2] == 15.0  # not at minute 2: it waits behind the head, as under FIFO


def test_easy_lets_a_long_job_run_on_the_extra_gpus_the_head_will_not_need():
    assert starts(easy)[3] == 3.0


def test_the_head_starts_no_later_under_easy_than_under_fifo_while_plain_backfill_delays_it():
    assert starts(easy)[1] <= starts(fifo)[1] == 10.0
    assert starts(gang)[1] == 32.0  # gang lets job 2 take the GPUs at minute 2, and the head waits for it


def test_the_extra_gpus_are_spent_once_by_the_long_jobs_that_take_them():
    # at minute 2 the head (6 of 8 GPUs) leaves 2 extra at its shadow time, 10; job 2 takes 1 of them
    trace = [*WIDE_HEAD[:2], TraceJob(2, 2.0, 1, 30.0), TraceJob(3, 2.0, 2, 30.0)]
    first = starts(easy, trace)
    assert first[1] == 10.0 and first[2] == 2.0
    assert first[3] == 15.0  # 2 more long-running GPUs would leave the head 5 at minute 10


def test_a_job_started_in_the_same_decision_counts_toward_the_head_s_shadow_time():
    # all at minute 0: job 0 starts, the head waits for it (shadow time 10), job 2 is done by 8
    trace = [TraceJob(0, 0.0, 4, 10.0), TraceJob(1, 0.0, 6, 5.0), TraceJob(2, 0.0, 2, 8.0)]
    assert starts(easy, trace) == {0: 0.0, 1: 10.0, 2: 0.0}


def test_the_shadow_time_is_when_enough_gpus_free_up_and_the_extra_is_what_the_head_leaves():
    assert shadow_time([(20.0, 2), (10.0, 5)], 1, 6) == (10.0, 0)
    assert shadow_time([(20.0, 2), (10.0, 5)], 1, 7) == (20.0, 1)
    assert shadow_time([(float("inf"), 5)], 1, 6) == (float("inf"), 0)


@pytest.mark.parametrize(("seed", "load"), SYNTHETIC)
def test_with_exact_durations_no_head_starts_later_than_any_reservation_it_was_given(seed, load):
    trace = synthetic_trace(seed, 200, 32, load)
    reservations: dict[int, list[float]] = {}

    def recording(queue, free_gpus, now):
        chosen = easy(queue, free_gpus, now)
        left = [j for j in queue if not j.running and j.id not in chosen]
        if left:
            started = [(now + j.duration, j.gpus) for j in queue if j.id in chosen and not j.running]
            ends = [(now + j.duration - j.executed, j.gpus) for j in queue if j.running] + started
            free = free_gpus - sum(g for _, g in started)
            reservations.setdefault(left[0].id, []).append(shadow_time(ends, free, left[0].gpus)[0])
        return chosen

    first = starts(recording, trace, Rules(gpus=32))
    assert reservations, "the trace never blocked a head: the test proves nothing"
    assert all(first[job] <= min(shadows) + 1e-6 for job, shadows in reservations.items())


@pytest.mark.parametrize(("seed", "load"), SYNTHETIC)
def test_easy_mean_completion_time_on_the_synthetic_trace_is_at_most_fifo_s(seed, load):
    trace = synthetic_trace(seed, 200, 32, load)
    fifo_jct, easy_jct = (measure(trace, simulate(trace, Rules(gpus=32), p), 32).mean_jct for p in (fifo, easy))
    assert easy_jct <= fifo_jct


def test_without_durations_easy_lets_nothing_pass_the_head_and_is_strict_fifo():
    hidden = Rules(gpus=8, reveal_duration=False)
    assert starts(easy, rules=hidden) == starts(fifo, rules=hidden)


def test_easy_is_registered_as_a_non_preemptive_builtin_that_needs_durations_and_labs_may_name_it():
    builtin = BUILTINS["easy"]
    assert builtin.choose is easy and not builtin.preemptive and builtin.needs_duration
    assert tuple(BUILTINS) == BUILTIN_NAMES  # what a lab.yaml's goals and compare lists are checked against
