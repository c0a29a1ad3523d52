"""Megatron-LM's tensor-parallel layer: its all-reduce bytes, FLOPs and times, worked by hand."""

import pytest

from gpu_worker.multigpu.links import H200_BF16_DENSE_FLOPS, INFINIBAND_NDR, NVLINK_H200
from gpu_worker.multigpu.tensor_parallel import (
    all_reduce_bytes,
    attention_flops_forward,
    layer_flops_forward,
    layer_step,
    mlp_flops_forward,
)

B, S, H = 1, 2048, 12288  # GPT-3 175B's hidden size, one sequence of 2048 tokens


def test_one_all_reduce_moves_the_layers_activation():
    assert all_reduce_bytes(B, S, H, 2) == 2048 * 12288 * 2 == 50_331_648


def test_layer_flops_are_24bsh2_plus_4bs2h():
    assert mlp_flops_forward(B, S, H) == 16 * S * H * H
    assert attention_flops_forward(B, S, H) == 8 * S * H * H + 4 * S * S * H
    assert layer_flops_forward(B, S, H) == 24 * S * H * H + 4 * S * S * H


def test_a_layer_on_eight_gpus_does_four_all_reduces_beside_a_third_of_its_compute():
    step = layer_step(B, S, H, 8, NVLINK_H200, H200_BF16_DENSE_FLOPS)
    assert step.all_reduces == 4
    assert step.compute_time == pytest.approx(3 * (24 * S * H * H + 4 * S * S * H) / 8 / 989.5e12)
    one = 14 * 3.4e-6 + 2 * 7 / 8 * 50_331_648 / 450e9
    assert step.comm_time == pytest.approx(4 * one)


def test_tensor_parallelism_over_infiniband_spends_most_of_the_layer_communicating():
    nvlink = layer_step(B, S, H, 8, NVLINK_H200, H200_BF16_DENSE_FLOPS)
    infiniband = layer_step(B, S, H, 8, INFINIBAND_NDR, H200_BF16_DENSE_FLOPS)
    assert nvlink.comm_fraction < 0.3
    assert infiniband.comm_fraction > 0.7


def test_one_gpu_has_no_all_reduce():
    step = layer_step(B, S, H, 1, NVLINK_H200, H200_BF16_DENSE_FLOPS)
    assert step.comm_time == 0 and step.all_reduces == 0


def test_it_rejects_an_efficiency_outside_zero_to_one():
    with pytest.raises(ValueError):
        layer_step(B, S, H, 8, NVLINK_H200, H200_BF16_DENSE_FLOPS, efficiency=1.5)
