"""The measuring child's order: a job's sizes checked together, then timed together; each sweep point apart.

The order itself is proven on a GPU (`test_gpu_engine.py`: every size's check comes before the first timing, and
the later sizes waited nothing for the GPU lock); here, the grouping that decides it, and the holds a group's
timing takes, in order, with a backend that records them.
"""

from __future__ import annotations

import contextlib

import pytest

from gpu_worker.backends.base import LearnerError
from gpu_worker.isolation.child import _groups, _SizeFault, _time_group


def _run(n: int, sweep_block: int | None = None) -> dict:
    run = {"sizes": {"n": n}}
    if sweep_block is not None:
        run["sweep_block"] = sweep_block
    return run


def test_the_sizes_are_one_group_and_each_sweep_point_one_of_its_own_after_them():
    runs = list(enumerate([_run(1024), _run(4096), _run(4096, 128), _run(16384), _run(4096, 256)]))
    groups = _groups(runs)
    assert [[i for i, _ in g] for g in groups] == [[0, 1, 3], [2], [4]]


def test_a_profiled_size_alone_is_one_group():
    assert _groups([(2, _run(16384))]) == [[(2, _run(16384))]]
    assert _groups([]) == []


class _RecordingBackend:
    """The cuda backend's timing surface as `_time_group` calls it, recording each hold and step in order. Its
    figures are placeholders that nothing here asserts on as GPU numbers: the order of the holds is the subject."""

    def __init__(self, fault_at: tuple[str, int] | None = None):
        self.steps: list[str] = []
        self.fault_at = fault_at

    def device_state(self) -> str:
        self.steps.append("state")
        return "state"

    @contextlib.contextmanager
    def alone(self):
        self.steps.append("exclusive+")
        try:
            yield 0.25
        finally:  # as the lock's own context lets go
            self.steps.append("exclusive-")

    @contextlib.contextmanager
    def correctness(self):
        self.steps.append("shared+")
        try:
            yield
        finally:
            self.steps.append("shared-")

    def _step(self, name: str, index: int) -> None:
        self.steps.append(f"{name} {index}")
        if self.fault_at == (name, index):
            raise LearnerError("runtime_error", f"the kernel failed on the GPU at size {index}")

    def time_launches(self, prepared: int, budget_s: float | None = None) -> int:
        self._step("launches", prepared)
        return prepared

    def finish_timing(self, done: int, states: list[str]) -> dict:
        self._step("finish", done)
        return {"lock_held_seconds": 0.001 * (done + 1), "states": states}


def _group(n: int) -> list[tuple[int, dict]]:
    return [(i, _run(1024 << i)) for i in range(n)]


def test_every_sizes_launches_share_one_exclusive_hold_and_their_checks_one_shared_hold_after_it():
    backend, timings = _RecordingBackend(), []
    _time_group(backend, _group(3), {0: 0, 1: 1, 2: 2}, {0: {}, 1: {}, 2: {}}, timings)
    assert backend.steps == [
        "state",
        "exclusive+", "launches 0", "launches 1", "launches 2", "exclusive-",
        "state",
        "shared+", "finish 0", "finish 1", "finish 2", "shared-",
    ]  # fmt: skip
    assert [i for i, _ in timings] == [0, 1, 2]
    assert [t["lock_wait_seconds"] for _, t in timings] == [0.25, 0.0, 0.0]  # the hold's wait is the first size's
    assert [t["launches_held_seconds"] for _, t in timings] == [0.001, 0.002, 0.003]
    assert all(set(t["host_phases_s"]) == {"timed_launches", "timed_checks"} for _, t in timings)


@pytest.mark.parametrize(("step", "index"), [("launches", 1), ("finish", 2)])
def test_a_fault_names_the_size_it_happened_at_and_keeps_the_sizes_finished_before_it(step, index):
    backend, timings = _RecordingBackend(fault_at=(step, index)), []
    with pytest.raises(_SizeFault) as caught:
        _time_group(backend, _group(3), {0: 0, 1: 1, 2: 2}, {0: {}, 1: {}, 2: {}}, timings)
    assert caught.value.index == index and isinstance(caught.value.error, LearnerError)
    assert f"size {index}" in caught.value.error.message
    assert [i for i, _ in timings] == ([] if step == "launches" else [0, 1])
