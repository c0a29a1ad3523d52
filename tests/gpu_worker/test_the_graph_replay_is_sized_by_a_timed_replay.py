"""The hot number's graph holds enough launches for a replay of `graph_replay_ms`, sized by a timed replay.

Its K was sized from the warm-up's per-launch estimate, which for a kernel of a microsecond or two is the host's
launch rate: graphs of ~118 launches replayed in 0.2 ms where 1 ms was meant, and the hot median's CV at 2^18 was
2.3% (runs 29 and 30). The CuPy here is a stand-in whose GPU time is arithmetic (each captured launch costs a set
number of microseconds when its graph replays): what is tested is the harness's sizing, no GPU figure is made up
(the GPU itself replays graphs in `test_gpu_timing.py`).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpu_worker.measurement import timing


class _Graph:
    def __init__(self, stream: _Stream, launches: int):
        self.stream, self.launches = stream, launches

    def upload(self, stream: _Stream) -> None:
        pass

    def launch(self, stream: _Stream) -> None:
        stream.now_ms += self.launches * stream.kernel_ms


class _Stream:
    """A stream whose clock moves by the kernel's time at each replayed launch; captures count their launches."""

    def __init__(self, kernel_ms: float):
        self.kernel_ms, self.now_ms = kernel_ms, 0.0
        self.capturing: int | None = None
        self.captures: list[int] = []

    def begin_capture(self) -> None:
        self.capturing = 0

    def end_capture(self) -> _Graph:
        launches, self.capturing = self.capturing or 0, None
        self.captures.append(launches)
        return _Graph(self, launches)

    def synchronize(self) -> None:
        pass


class _Event:
    def __init__(self) -> None:
        self.at_ms = 0.0

    def record(self, stream: _Stream) -> None:
        self.at_ms = stream.now_ms

    def synchronize(self) -> None:
        pass


def _cupy() -> SimpleNamespace:
    return SimpleNamespace(cuda=SimpleNamespace(Event=_Event, get_elapsed_time=lambda a, b: b.at_ms - a.at_ms))


def _launch(stream: _Stream) -> None:
    assert stream.capturing is not None, "the hot number launches only inside its graph"
    stream.capturing += 1


def test_a_graph_sized_from_the_launch_rate_is_captured_again_to_last_the_replay_it_aims_at():
    stream, config = _Stream(kernel_ms=0.0017), timing.TimingConfig()  # a 1.7 µs kernel, launched every 8.5 µs
    host = timing._HostClock()
    hot = timing._hot(_cupy(), _launch, stream, est_ms=0.0085, budget_ms=80.0, config=config, host=host)
    assert stream.captures == [118, 589]  # 1 ms / 8.5 µs, then 1 ms / 1.7 µs
    assert hot["launches_per_replay"] == 589
    assert hot["summary"]["median"] == pytest.approx(0.0017)
    sizing_ms = (118 + 589) * 0.0017  # one timed replay of each graph, counted in the GPU time spent
    assert (hot["gpu_ms"] - sizing_ms) / hot["summary"]["n"] == pytest.approx(589 * 0.0017)  # each replay ~1 ms
    assert set(host.seconds) >= {"hot_capture", "hot_replays", "hot_rule"}


def test_a_graph_sized_from_the_kernels_own_time_is_captured_once():
    stream = _Stream(kernel_ms=0.0040)
    hot = timing._hot(_cupy(), _launch, stream, est_ms=0.0045, budget_ms=80.0, config=timing.TimingConfig())
    assert stream.captures == [223]  # its replay lasts 0.89 ms: more than half of 1 ms, kept
    assert hot["launches_per_replay"] == 223


def test_k_stays_within_its_cap_however_short_the_kernel():
    stream, config = _Stream(kernel_ms=0.0001), timing.TimingConfig()
    hot = timing._hot(_cupy(), _launch, stream, est_ms=0.0085, budget_ms=80.0, config=config)
    assert stream.captures == [118, config.graph_max_launches]
    assert hot["launches_per_replay"] == config.graph_max_launches
