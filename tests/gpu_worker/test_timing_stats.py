"""Timing statistics (gpu_worker.measurement.stats): summaries, CIs of the median, the stopping rule, clock drops."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpu_worker.measurement import stats


def test_it_takes_the_median_of_an_odd_and_an_even_count():
    assert stats.median([3.0, 1.0, 2.0]) == 2.0
    assert stats.median([4.0, 1.0, 3.0, 2.0]) == 2.5


def test_it_refuses_the_median_of_nothing():
    with pytest.raises(ValueError):
        stats.median([])


def test_it_computes_the_interquartile_range_like_numpy():
    q1, q3, spread = stats.iqr(list(range(1, 10)))
    assert (q1, q3, spread) == (3.0, 7.0, 4.0)


def test_the_order_statistic_interval_needs_six_samples_at_95_percent():
    assert stats.median_ci_ranks(5) is None
    assert stats.median_ci_ranks(6) == (0, 5)


def test_the_order_statistic_ranks_match_the_binomial_tables():
    # n = 20: the classic 95% interval is [x(6), x(15)] in 1-based ranks (coverage 95.9%).
    assert stats.median_ci_ranks(20) == (5, 14)
    # n = 100: [x(40), x(61)] 1-based.
    assert stats.median_ci_ranks(100) == (39, 60)


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_the_ranks_are_the_widest_interval_the_binomial_allows(confidence):
    # the definition, summed afresh for each j: the running sum the stopping rule uses must agree with it
    for n in range(6, 160):
        got = stats.median_ci_ranks(n, confidence)
        ok = [j for j in range(n // 2 + 1) if 2.0 * stats._binom_cdf_half(j, n) <= 1.0 - confidence]
        assert got == ((ok[-1], n - 1 - ok[-1]) if ok else None), n


def test_the_median_interval_covers_the_true_median_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    hits = 0
    trials = 400
    for _ in range(trials):
        lo, hi, method = stats.median_ci(rng.exponential(1.0, size=41))
        assert method == "order-statistic"
        hits += lo <= math.log(2.0) <= hi
    assert 0.92 <= hits / trials <= 0.99


def test_it_falls_back_to_a_deterministic_bootstrap_for_few_samples():
    a = stats.median_ci([1.0, 2.0, 3.0, 4.0])
    b = stats.median_ci([1.0, 2.0, 3.0, 4.0])
    assert a == b and a[2] == "bootstrap"
    assert 1.0 <= a[0] <= a[1] <= 4.0


def test_a_summary_reports_spread_and_relative_precision():
    s = stats.summarize([1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.0])
    assert s.n == 8
    assert s.median == 1.0
    assert s.ci_low <= s.median <= s.ci_high
    assert s.rel_ci_half_width == pytest.approx((s.ci_high - s.ci_low) / 2.0)
    assert 0 < s.cv < 0.02
    assert s.as_dict()["ci_method"] == "order-statistic"


def test_it_keeps_sampling_until_the_minimum_count():
    stop, why = stats.should_stop([1.0] * 5, 0.001, stats.StopRule(min_samples=10))
    assert (stop, why) == (False, "min_samples")


def test_it_stops_when_the_median_is_tight():
    stop, why = stats.should_stop([1.0, 1.0001, 0.9999] * 10, 0.01, stats.StopRule(rel_precision=0.005))
    assert (stop, why) == (True, "converged")


def test_it_keeps_sampling_while_noisy_and_stops_when_the_budget_is_spent():
    noisy = list(np.random.default_rng(1).uniform(0.5, 1.5, size=30))
    assert stats.should_stop(noisy, 0.1, stats.StopRule(gpu_budget_s=0.35)) == (False, "noisy")
    assert stats.should_stop(noisy, 0.36, stats.StopRule(gpu_budget_s=0.35)) == (True, "budget")


def test_it_stops_at_the_sample_cap():
    assert stats.should_stop([1.0] * 50, 0.0, stats.StopRule(max_samples=50)) == (True, "max_samples")


def test_it_drops_samples_taken_under_75_percent_of_the_default_clock():
    kept, dropped = stats.drop_low_clock([1.0, 2.0, 3.0, 4.0], [1980, 1400, 1485, 1980], reference_mhz=1980)
    # 0.75 * 1980 = 1485: 1400 is under, 1485 is not.
    assert kept == [1.0, 3.0, 4.0]
    assert dropped == 1


def test_it_keeps_every_sample_when_the_reference_clock_is_unknown():
    kept, dropped = stats.drop_low_clock([1.0, 2.0], [100, 100], reference_mhz=0)
    assert kept == [1.0, 2.0] and dropped == 0


def test_it_needs_one_clock_reading_per_sample():
    with pytest.raises(ValueError):
        stats.drop_low_clock([1.0, 2.0], [1980], reference_mhz=1980)


def test_the_coefficient_of_variation_of_repeated_medians():
    assert stats.cv([1.0, 1.0, 1.0]) == 0.0
    assert stats.cv([0.99, 1.01]) == pytest.approx(0.01414, rel=1e-3)


# --- The harness's control flow, on a fake CuPy whose GPU is a virtual clock. ---


class _FakeStream:
    def __init__(self, gpu):
        self.gpu, self.ptr, self.capturing = gpu, 1, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        pass

    def begin_capture(self):
        self.capturing = []

    def end_capture(self):
        ops, self.capturing = self.capturing, None
        gpu = self.gpu

        class Graph:
            def upload(self, stream):
                pass

            def launch(self, stream):
                for op in ops:
                    op()
                gpu.now += 0.0001  # a replay's own cost, far under K launch gaps

        return Graph()


class _FakeGpu:
    """A GPU whose kernel takes `kernel_ms` (plus a jitter), memset `flush_ms`, events read the clock."""

    def __init__(self, kernel_ms=0.5, flush_ms=0.03, clock=1980, jitter=0.0):
        self.now, self.kernel_ms, self.flush_ms, self.jitter = 0.0, kernel_ms, flush_ms, jitter
        self.launches, self.memsets, self.clock = 0, 0, clock
        self.rng = np.random.default_rng(0)
        gpu = self

        class Event:
            def record(self, stream=None):
                self.t = gpu.now

            def synchronize(self):
                pass

        class Runtime:
            @staticmethod
            def memsetAsync(ptr, value, n, stream):
                gpu.memsets += 1
                gpu.now += gpu.flush_ms

            @staticmethod
            def getDeviceProperties(i):
                return {"l2CacheSize": 50 * 2**20}

        class Cuda:
            runtime = Runtime

            def __init__(self):
                self.Event = Event

            @staticmethod
            def Stream(non_blocking=True):
                return _FakeStream(gpu)

            @staticmethod
            def Device():
                return type("D", (), {"id": 0})()

            @staticmethod
            def get_elapsed_time(a, b):
                return b.t - a.t

        class Buf:
            data = type("P", (), {"ptr": 0})()

        self.cuda = Cuda()
        self.uint8 = "uint8"
        self.empty = lambda n, dtype=None: Buf()

    def launch(self, stream):
        if stream.capturing is not None:
            stream.capturing.append(self._run)
        else:
            self._run()

    def _run(self):
        self.launches += 1
        self.now += self.kernel_ms * (1.0 + self.jitter * self.rng.standard_normal())


class _FakeNvml:
    ok = True

    def __init__(self, clocks):
        self.clocks = iter(clocks)

    def sm_clock(self):
        return next(self.clocks, 1980)

    def reference_clock(self):
        return 1980

    def state(self):
        from gpu_worker.measurement.device_info import DeviceState

        return DeviceState(sm_clock_mhz=1980, nvml=True)


def _measure(gpu, **kw):
    from gpu_worker.measurement import timing

    original = timing._cupy
    timing._cupy = lambda: gpu
    try:
        return timing.measure(gpu.launch, **kw)
    finally:
        timing._cupy = original


def test_the_harness_reports_the_kernel_time_without_the_flush():
    gpu = _FakeGpu(kernel_ms=0.5, flush_ms=0.03)
    r = _measure(gpu)
    assert r["median_ms"] == pytest.approx(0.5)
    assert r["cold"]["stop_reason"] == "converged"
    assert gpu.memsets == r["cold"]["summary"]["n"]  # one flush before every sample
    assert r["hot"] is None  # 500 us: no graph replay


def test_the_harness_stays_within_its_gpu_time_budget_on_a_noisy_kernel():
    gpu = _FakeGpu(kernel_ms=2.0, jitter=0.2)
    r = _measure(gpu)
    assert r["cold"]["stop_reason"] == "budget"
    assert r["gpu_seconds"] <= 0.35 + 0.025  # at most one sample over


def test_small_kernels_get_a_graph_replay_number_divided_by_the_launch_count():
    gpu = _FakeGpu(kernel_ms=0.004, flush_ms=0.03)
    r = _measure(gpu)
    assert r["hot"]["summary"]["median"] == pytest.approx(0.004, rel=0.01)
    assert r["hot"]["launches_per_replay"] >= 10


def test_batches_taken_at_a_low_sm_clock_are_dropped_and_retaken():
    from gpu_worker.measurement.timing import TimingConfig

    gpu = _FakeGpu(kernel_ms=0.5)
    r = _measure(gpu, nvml=_FakeNvml([900, 900]), config=TimingConfig())
    assert r["cold"]["dropped_batches"] == 1
    assert "low_clock_batches_dropped" in r["flags"]
    assert r["median_ms"] == pytest.approx(0.5)


def test_a_steady_kernel_stops_after_the_first_batch_and_a_noisy_one_takes_what_its_ci_needs():
    from gpu_worker.measurement.timing import TimingConfig

    steady = _measure(_FakeGpu(kernel_ms=0.5), config=TimingConfig(first_batch=20))
    assert steady["cold"]["summary"]["n"] == 20 and steady["cold"]["stop_reason"] == "converged"
    noisy = _measure(_FakeGpu(kernel_ms=0.5, jitter=0.02), config=TimingConfig(first_batch=20))
    assert noisy["cold"]["stop_reason"] == "converged"
    assert 20 < noisy["cold"]["summary"]["n"] <= 400  # sized by the CI, not a fixed batch of 100 or more
    assert noisy["cold"]["batches"] >= 2  # a second batch, sized by what the first one left open


def test_a_process_that_just_timed_warms_up_with_a_few_launches_only():
    from gpu_worker.measurement import timing

    timing._LAST_TIMED_END[0] = -1e9  # long ago: the clock may have fallen
    timing.gpu_lock._SEEN_STAMP[0] = -1e9  # and no other process's timing seen lately
    first = _measure(_FakeGpu(kernel_ms=0.05))
    assert first["warmup"]["gpu_ms"] >= timing.TimingConfig().warmup_ms
    second = _measure(_FakeGpu(kernel_ms=0.05))  # the next size, at once
    assert timing.TimingConfig().warm_warmup_ms <= second["warmup"]["gpu_ms"] < timing.TimingConfig().warmup_ms


def test_the_lock_covers_the_launches_and_not_the_device_state_reads():
    import contextlib

    gpu = _FakeGpu(kernel_ms=0.5)
    inside: list[str] = []

    class Watched(_FakeNvml):
        def state(self):
            inside.append("state" if not holding else "state inside the lock")
            return super().state()

    holding = False

    @contextlib.contextmanager
    def lock():
        nonlocal holding
        holding, launches = True, gpu.launches
        yield 0.25
        holding = False
        inside.append(f"launched {gpu.launches - launches}")

    r = _measure(gpu, nvml=Watched([]), exclusive=lock())
    assert inside[0] == "state" and inside[-1] == "state"
    assert "state inside the lock" not in inside
    assert inside[1] == f"launched {gpu.launches}"  # every launch, warm-up included, under the lock
    assert r["lock_wait_seconds"] == 0.25 and r["lock_held_seconds"] >= 0.0
