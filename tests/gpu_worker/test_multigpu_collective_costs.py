"""The alpha-beta model of NCCL's collectives and nccl-tests' bandwidths, against values worked by hand."""

import math

import pytest

from gpu_worker.multigpu.collectives import algbw, bus_factor, busbw, cost, message_sizes, steps
from gpu_worker.multigpu.links import INFINIBAND_NDR, NVLINK_H200

GIB = 1 << 30


def test_bus_factors_are_the_ones_nccl_tests_applies():
    assert bus_factor("all_reduce", 8) == pytest.approx(2 * 7 / 8)
    assert bus_factor("all_gather", 8) == pytest.approx(7 / 8)
    assert bus_factor("reduce_scatter", 4) == pytest.approx(3 / 4)
    assert bus_factor("broadcast", 8) == 1.0


def test_a_ring_all_reduce_of_a_gib_on_eight_h200s_costs_its_steps_plus_its_bytes():
    # 2(n-1) = 14 steps of 3.4 us, then 2 * 7/8 * 2^30 bytes at 450 GB/s
    expected = 14 * 3.4e-6 + 2 * 7 / 8 * GIB / 450e9
    estimate = cost("all_reduce", "ring", GIB, 8, NVLINK_H200)
    assert estimate.time == pytest.approx(expected)
    assert estimate.algbw == pytest.approx(GIB / expected)
    assert estimate.busbw == pytest.approx(GIB / expected * 14 / 8)
    assert estimate.label == "model"


def test_a_ring_all_gather_over_infiniband_counts_the_whole_gathered_array():
    expected = 3 * 9.6e-6 + 3 / 4 * 1e9 / 50e9
    assert cost("all_gather", "ring", 1e9, 4, INFINIBAND_NDR).time == pytest.approx(expected)
    assert cost("reduce_scatter", "ring", 1e9, 4, INFINIBAND_NDR).time == pytest.approx(expected)


def test_busbw_of_a_large_ring_collective_approaches_the_link_bandwidth_whatever_the_gpu_count():
    for n in (2, 4, 8, 16):
        for collective in ("all_reduce", "all_gather", "reduce_scatter", "broadcast"):
            assert cost(collective, "ring", 64 * GIB, n, NVLINK_H200).busbw == pytest.approx(450e9, rel=1e-3)


def test_a_tree_takes_log_depth_steps_and_a_ring_linear_ones():
    assert steps("all_reduce", "ring", 16) == 30
    assert steps("all_reduce", "tree", 16) == 8
    assert steps("broadcast", "tree", 8) == 3
    assert steps("all_gather", "tree", 5) == 3


def test_a_tree_all_reduce_wins_on_small_messages_and_loses_on_large_ones():
    def time(algorithm, size, n):
        return cost("all_reduce", algorithm, size, n, INFINIBAND_NDR).time

    assert time("tree", 8, 64) < time("ring", 8, 64)
    assert time("tree", 16 * GIB, 8) > time("ring", 16 * GIB, 8)
    # double binary tree: 2S/B plus two depths of latency
    assert time("tree", GIB, 64) == pytest.approx(12 * 9.6e-6 + 2 * GIB / 50e9)


def test_with_two_gpus_tree_and_ring_are_one_exchange():
    assert cost("all_reduce", "tree", GIB, 2, NVLINK_H200).time == cost("all_reduce", "ring", GIB, 2, NVLINK_H200).time


def test_one_gpu_communicates_nothing():
    estimate = cost("all_reduce", "ring", GIB, 1, NVLINK_H200)
    assert estimate.time == 0 and math.isinf(estimate.algbw)


def test_measured_bandwidths_use_the_same_definitions():
    assert algbw(1e9, 0.01) == pytest.approx(100e9)
    assert busbw("all_reduce", 1e9, 0.01, 8) == pytest.approx(175e9)


def test_sizes_sweep_as_nccl_tests_does():
    assert message_sizes(8, 64) == [8, 16, 32, 64]


@pytest.mark.parametrize(
    ("collective", "algorithm", "n"), [("gather", "ring", 2), ("all_reduce", "mesh", 2), ("all_reduce", "ring", 0)]
)
def test_it_rejects_an_unknown_collective_algorithm_or_gpu_count(collective, algorithm, n):
    with pytest.raises(ValueError):
        cost(collective, algorithm, 1024, n, NVLINK_H200)
