"""Data-parallel gradient all-reduce time against model size and link, worked by hand."""

import pytest

from gpu_worker.multigpu.data_parallel import gradient_all_reduce, step
from gpu_worker.multigpu.links import H200_BF16_DENSE_FLOPS, INFINIBAND_NDR, NVLINK_H200


def test_a_7b_model_all_reduces_14_gb_of_bf16_gradients():
    estimate = gradient_all_reduce(7e9, 8, NVLINK_H200, bytes_per_grad=2)
    assert estimate.size == 14e9
    assert estimate.time == pytest.approx(14 * 3.4e-6 + 2 * 7 / 8 * 14e9 / 450e9)


def test_the_same_all_reduce_over_infiniband_is_nine_times_slower():
    nvlink = gradient_all_reduce(7e9, 8, NVLINK_H200).time
    infiniband = gradient_all_reduce(7e9, 8, INFINIBAND_NDR).time
    assert infiniband / nvlink == pytest.approx(9, rel=0.01)


def test_a_step_counts_six_flops_per_parameter_per_token_and_hides_what_the_backward_covers():
    one = step(7e9, 8, NVLINK_H200, tokens_per_gpu=4096, flops_per_gpu=H200_BF16_DENSE_FLOPS)
    assert one.compute_time == pytest.approx(6 * 7e9 * 4096 / 989.5e12)
    assert one.exposed_comm_time == 0
    short = step(7e9, 8, INFINIBAND_NDR, tokens_per_gpu=16, flops_per_gpu=H200_BF16_DENSE_FLOPS)
    assert short.exposed_comm_time == pytest.approx(short.all_reduce.time - 2 / 3 * short.compute_time)


def test_it_rejects_a_model_without_parameters():
    with pytest.raises(ValueError):
        gradient_all_reduce(0, 8, NVLINK_H200)
