"""Activation memory per layer from Korthikanti et al. 2022, table 2, for GPT-3 175B's shape."""

import pytest

from gpu_worker.multigpu.activation_memory import per_layer_bytes

S, B, H, A = 2048, 1, 12288, 96  # 5 a s / h = 80
SBH = S * B * H


def test_without_parallelism_a_layer_keeps_34_plus_5as_over_h_bytes_per_element():
    assert per_layer_bytes("none", S, B, H, A) == pytest.approx(SBH * 114)


def test_tensor_parallelism_leaves_ten_replicated():
    assert per_layer_bytes("tp", S, B, H, A, tp=8) == pytest.approx(SBH * (10 + 3 + 10))


def test_sequence_parallelism_divides_everything_by_t():
    assert per_layer_bytes("tp_sp", S, B, H, A, tp=8) == pytest.approx(SBH * 114 / 8)
    assert per_layer_bytes("tp_sp_selective", S, B, H, A, tp=8) == pytest.approx(SBH * 34 / 8)


def test_selective_recompute_drops_the_attention_term_and_full_recompute_keeps_the_input():
    assert per_layer_bytes("tp_selective", S, B, H, A, tp=8) == pytest.approx(SBH * 13)
    assert per_layer_bytes("full", S, B, H, A, tp=8) == pytest.approx(SBH * 2)


def test_it_rejects_an_unknown_mode():
    with pytest.raises(ValueError):
        per_layer_bytes("zero3", S, B, H, A)
