"""The measuring child's order: a job's sizes checked together, then timed together; each sweep point apart.

The order itself is proven on a GPU (`test_gpu_engine.py`: every size's check comes before the first timing, and
the later sizes waited nothing for the GPU lock); here, the grouping that decides it.
"""

from __future__ import annotations

from gpu_worker.isolation.child import _groups


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
