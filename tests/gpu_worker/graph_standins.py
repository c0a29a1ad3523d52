"""A stand-in CuPy for the timing harness's graph replay: GPU time is arithmetic, no GPU figure is made up.

A stream's clock moves by the kernel's time at each replayed launch, and a launch outside a capture reads as
the kernel plus the host's launch gap (what a single launch between two events measures for a kernel of a
microsecond or two). Captures count their launches. The GPU itself replays graphs in `test_gpu_timing.py`.
"""

from __future__ import annotations

from types import SimpleNamespace


class Graph:
    def __init__(self, stream: Stream, launches: int):
        self.stream, self.launches = stream, launches

    def upload(self, stream: Stream) -> None:
        pass

    def launch(self, stream: Stream) -> None:
        stream.now_ms += self.launches * stream.kernel_ms


class Stream:
    """`kernel_ms` a launch on the GPU; `gap_ms` more for a launch outside a graph (the host's enqueueing)."""

    def __init__(self, kernel_ms: float, gap_ms: float = 0.0):
        self.kernel_ms, self.gap_ms, self.now_ms = kernel_ms, gap_ms, 0.0
        self.capturing: int | None = None
        self.captures: list[int] = []
        self.single_launches = 0

    def begin_capture(self) -> None:
        self.capturing = 0

    def end_capture(self) -> Graph:
        launches, self.capturing = self.capturing or 0, None
        self.captures.append(launches)
        return Graph(self, launches)

    def synchronize(self) -> None:
        pass

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class Event:
    def __init__(self) -> None:
        self.at_ms = 0.0

    def record(self, stream: Stream) -> None:
        self.at_ms = stream.now_ms

    def synchronize(self) -> None:
        pass


def cupy() -> SimpleNamespace:
    """The parts of CuPy the harness touches: events, and the device's id and L2 size (a 50 MiB L2)."""
    return SimpleNamespace(
        cuda=SimpleNamespace(
            Event=Event,
            get_elapsed_time=lambda a, b: b.at_ms - a.at_ms,
            Device=lambda: SimpleNamespace(id=0),
            runtime=SimpleNamespace(getDeviceProperties=lambda device: {"l2CacheSize": 50 << 20}),
        )
    )


def launch(stream: Stream) -> None:
    """One launch: counted into a capture, or run at once (the kernel's time and the host's gap)."""
    if stream.capturing is not None:
        stream.capturing += 1
    else:
        stream.single_launches += 1
        stream.now_ms += stream.kernel_ms + stream.gap_ms


def graph_only_launch(stream: Stream) -> None:
    """A launch the hot number may make only inside its graph."""
    assert stream.capturing is not None, "the hot number launches only inside its graph"
    stream.capturing += 1
