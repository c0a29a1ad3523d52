"""The occupancy lab's shared memory per block lets exactly `blocks_per_sm` blocks onto an sm_90 SM, by the calculator.

The sweep's planned x (8 * blocks_per_sm resident warps) is only true if each size's `smem` does that, for a
kernel of at most 32 registers per thread; one that adds 16 KiB of static shared memory (the slow sample) loses a
block but must still launch. Past 32 registers the register file, not the shared memory, limits the 8-block
size: the sweep then draws the driver's count (`x_measured`).
"""

from __future__ import annotations

import pytest

from gpu_worker.exercise.labspec import find_lab
from gpu_worker.exercise.launch import resolve_launch
from gpu_worker.science.occupancy import occupancy

LAB = find_lab("occupancy")
SIZES = [*LAB.spec.sizes["sim"], *LAB.spec.sizes["cuda"]]


@pytest.mark.parametrize("sizes", SIZES, ids=[f"{s['blocks_per_sm']}-per-sm" for s in SIZES])
def test_each_size_holds_blocks_per_sm_blocks_of_a_lean_kernel(sizes):
    config = resolve_launch(LAB.spec.launch, sizes)  # also within the 227 KiB a block may have
    result = occupancy("sm_90", config.threads_per_block, 32, 0, config.shared_bytes)
    assert result.active_blocks_per_sm == sizes["blocks_per_sm"]
    assert result.active_warps_per_sm == 8 * sizes["blocks_per_sm"]


@pytest.mark.parametrize("sizes", SIZES, ids=[f"{s['blocks_per_sm']}-per-sm" for s in SIZES])
def test_sixteen_kib_of_static_shared_memory_costs_a_block_but_still_launches(sizes):
    config = resolve_launch(LAB.spec.launch, sizes)
    result = occupancy("sm_90", config.threads_per_block, 32, 16 * 1024, config.shared_bytes)
    assert result.launchable
    assert result.active_blocks_per_sm < sizes["blocks_per_sm"] or sizes["blocks_per_sm"] == 1


def test_forty_registers_per_thread_keep_six_blocks_where_the_shared_memory_allows_eight():
    [eight] = [s for s in LAB.spec.sizes["cuda"] if s["blocks_per_sm"] == 8]
    result = occupancy("sm_90", 256, 40, 0, resolve_launch(LAB.spec.launch, eight).shared_bytes)
    assert (result.active_blocks_per_sm, result.limited_by) == (6, "registers")
