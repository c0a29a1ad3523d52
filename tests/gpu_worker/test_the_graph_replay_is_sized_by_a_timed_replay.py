"""The hot number's graph holds enough launches for a replay of `graph_replay_ms`, sized by a timed replay.

Its K was sized from the warm-up's per-launch estimate, which for a kernel of a microsecond or two is the host's
launch rate: graphs of ~118 launches replayed in 0.2 ms where 1 ms was meant, and the hot median's CV at 2^18 was
2.3% (runs 29 and 30). The CuPy here is a stand-in whose GPU time is arithmetic (`graph_standins`): what is
tested is the harness's sizing, no GPU figure is made up (the GPU itself replays graphs in `test_gpu_timing.py`).
"""

from __future__ import annotations

import pytest
from graph_standins import Stream, cupy, graph_only_launch

from gpu_worker.measurement import timing


def test_a_graph_sized_from_the_launch_rate_is_captured_again_to_last_the_replay_it_aims_at():
    stream, config = Stream(kernel_ms=0.0017), timing.TimingConfig()  # a 1.7 µs kernel, launched every 8.5 µs
    host = timing._HostClock()
    hot = timing._hot(cupy(), graph_only_launch, stream, est_ms=0.0085, budget_ms=80.0, config=config, host=host)
    assert stream.captures == [118, 589]  # 1 ms / 8.5 µs, then 1 ms / 1.7 µs
    assert hot["launches_per_replay"] == 589
    assert hot["summary"]["median"] == pytest.approx(0.0017)
    sizing_ms = (118 + 589) * 0.0017  # one timed replay of each graph, counted in the GPU time spent
    assert (hot["gpu_ms"] - sizing_ms) / hot["summary"]["n"] == pytest.approx(589 * 0.0017)  # each replay ~1 ms
    assert set(host.seconds) >= {"hot_capture", "hot_replays", "hot_rule"}


def test_a_graph_sized_from_the_kernels_own_time_is_captured_once():
    stream = Stream(kernel_ms=0.0040)
    hot = timing._hot(cupy(), graph_only_launch, stream, est_ms=0.0045, budget_ms=80.0, config=timing.TimingConfig())
    assert stream.captures == [223]  # its replay lasts 0.89 ms: more than half of 1 ms, kept
    assert hot["launches_per_replay"] == 223


def test_k_stays_within_its_cap_however_short_the_kernel():
    stream, config = Stream(kernel_ms=0.0001), timing.TimingConfig()
    hot = timing._hot(cupy(), graph_only_launch, stream, est_ms=0.0085, budget_ms=80.0, config=config)
    assert stream.captures == [118, config.graph_max_launches]
    assert hot["launches_per_replay"] == config.graph_max_launches
