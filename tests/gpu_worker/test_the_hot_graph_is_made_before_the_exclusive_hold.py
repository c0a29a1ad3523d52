"""The hot number's graph is captured and sized as correctness work, before the GPU is taken alone.

Capturing K launches (each a host launch call), instantiating and uploading the graph and the replays that size
K took place inside the exclusive hold, where every other job's timing waited for them; a job's first size,
the only hot one of vector-add's three, held the lock 0.13 s for 0.026 s of GPU time (run 30). Now
`timing.ready_graph` makes it beside other jobs' checks and `_hot` only replays it. The CuPy here is a stand-in
whose GPU time is arithmetic (`graph_standins`); the GPU itself times graphs in `test_gpu_timing.py`.
"""

from __future__ import annotations

import pytest
from graph_standins import Graph, Stream, cupy, graph_only_launch, launch

from gpu_worker.measurement import timing


@pytest.fixture(autouse=True)
def _standin_cupy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timing, "_cupy", cupy)


def test_a_short_kernels_graph_is_sized_before_the_hold_and_only_replayed_in_it():
    stream = Stream(kernel_ms=0.0017, gap_ms=0.0068)  # a single launch reads 8.5 µs: the host's launch rate
    ready = timing.ready_graph(launch, stream)
    assert ready is not None
    assert stream.captures == [118, 589]  # sized from the single launches, then from its own timed replay
    assert (ready.launches, ready.estimate_ms) == (589, pytest.approx(0.0085))
    host = timing._HostClock()
    hot = timing._hot(cupy(), graph_only_launch, stream, 0.0085, 80.0, timing.TimingConfig(), host, ready)
    assert stream.captures == [118, 589]  # nothing captured inside the hold
    assert "hot_capture" not in host.seconds
    assert hot["graph_captured"] == "before the hold"
    assert hot["graph_made_before_s"] == round(ready.host_s, 5) > 0  # said, though spent outside the hold
    assert hot["summary"]["median"] == pytest.approx(0.0017)
    assert hot["gpu_ms"] == pytest.approx(hot["summary"]["n"] * 589 * 0.0017)  # the hold's GPU time: replays only


def test_a_graph_sized_long_beside_other_work_is_captured_again_in_the_hold():
    stream = Stream(kernel_ms=0.0017)
    # 118 launches, its sizing replay read 1 ms beside other jobs' work (it replays in 0.2 ms alone)
    beside = timing.ReadyGraph(Graph(stream, 118), 118, replay_ms=1.0, estimate_ms=0.0085, host_s=0.0)
    host = timing._HostClock()
    hot = timing._hot(cupy(), graph_only_launch, stream, 0.0085, 80.0, timing.TimingConfig(), host, beside)
    assert stream.captures == [589]  # its first round replayed in 0.2 ms: sized again from that round
    assert hot["graph_captured"] == "before the hold, again in it"
    assert hot["launches_per_replay"] == 589
    assert "hot_capture" in host.seconds


def test_a_long_kernel_gets_no_graph_and_one_launch():
    stream = Stream(kernel_ms=0.6)
    assert timing.ready_graph(launch, stream) is None
    assert (stream.captures, stream.single_launches) == ([], 1)


def test_a_kernel_just_over_the_hot_line_gets_no_graph():
    stream = Stream(kernel_ms=0.07)  # over `graph_below_ms` (50 µs): a cold number only
    assert timing.ready_graph(launch, stream) is None
    assert stream.captures == []


def test_every_second_of_the_hold_is_in_a_named_step_or_in_the_unaccounted_one():
    stream = Stream(kernel_ms=0.02, gap_ms=0.005)
    config = timing.TimingConfig(flush=False, hold=False)  # no flush buffer or blocking kernel in the stand-in
    done = timing.launches(launch, stream, config, hot=False)
    phases = dict(done["hold_phases_s"])
    phases.pop("harness")  # made before the hold
    assert {"warmup", "cold_enqueue", "cold_wait", "cold_read", "cold_rule", "cold_summary"} <= set(phases)
    assert phases["unaccounted"] >= 0.0
    assert sum(phases.values()) == pytest.approx(done["lock_held_seconds"], abs=1e-4)
