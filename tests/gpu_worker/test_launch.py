"""Launch shapes are evaluated from formulas and checked against the device's limits."""

from __future__ import annotations

import pytest

from gpu_worker.exercise.launch import LaunchRejected, resolve_launch
from gpu_worker.protocol import LaunchSpec


def test_the_vector_add_launch_covers_every_element():
    config = resolve_launch(LaunchSpec(block=["256"], grid=["ceil_div(n, 256)"]), {"n": 1000})
    assert (config.grid, config.block, config.shared_bytes) == ((4,), (256,), 0)
    assert config.threads == 1024 and config.threads_per_block == 256


@pytest.mark.parametrize(
    ("block", "grid", "shared", "words"),
    [
        (["2048"], ["1"], "0", "over the device limit of 1024"),
        (["32", "64"], ["1"], "0", "2048 threads"),
        (["1", "1", "128"], ["1"], "0", "block.z is 128"),
        (["256"], ["0"], "0", "at least 1"),
        (["256"], ["1", "70000"], "0", "grid.y is 70000"),
        (["256"], ["1"], "300000", "shared memory"),
        (["256"], ["1", "1", "1", "1"], "0", "1 to 3 dimensions"),
        (["m"], ["1"], "0", "cannot be evaluated"),
    ],
)
def test_it_rejects_launches_no_device_could_run(block, grid, shared, words):
    with pytest.raises(LaunchRejected, match=words):
        resolve_launch(LaunchSpec(block=block, grid=grid, dynamic_shared_bytes=shared), {"n": 1000})
