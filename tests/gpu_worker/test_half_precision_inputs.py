"""A lab may store its inputs in float16 (`dtype: float16`): the mixed-precision lab's inputs, poison and check."""

from __future__ import annotations

import numpy as np

from gpu_worker.exercise import checker
from gpu_worker.exercise.formula import array_value, number_value
from gpu_worker.exercise.inputs import input_arrays, make_arguments, poison
from gpu_worker.exercise.labspec import find_lab

LAB = find_lab("mixed-precision")
SIZES = LAB.spec.sizes["sim"][0]


def _inputs(seed: int = 7) -> dict:
    return input_arrays(LAB.spec.harness().args_for("numba"), SIZES, seed)


def test_the_inputs_are_float16_in_minus_one_to_one_and_the_output_is_poisoned_float32():
    arrays = make_arguments(LAB.spec.harness().args_for("numba"), SIZES, 7)
    assert arrays["x"].dtype == np.float16 and arrays["x"].shape == (SIZES["n"],)
    assert np.abs(arrays["x"]).max() <= 1 and np.isnan(arrays["out"]).all() and arrays["out"].dtype == np.float32
    assert np.isnan(poison("float16", (3,))).all()


def test_a_float32_accumulation_passes_the_check_and_a_float16_one_fails_it():
    arrays = _inputs()
    expected = array_value(LAB.spec.expected["out"], arrays)
    blocks = (SIZES["n"] // 4096, 4096)
    as32 = np.sum(np.reshape(arrays["x"].astype(np.float32) * arrays["y"].astype(np.float32), blocks), 1)
    acc16 = np.zeros(blocks[0], np.float16)
    for j in range(4096):  # a float16 running sum, one term at a time
        acc16 = (acc16 + np.reshape(arrays["x"] * arrays["y"], blocks)[:, j]).astype(np.float16)
    tolerance = LAB.spec.tolerance
    assert checker.compare("out", expected, as32.astype(np.float32), tolerance, SIZES).passed
    assert not checker.compare("out", expected, acc16.astype(np.float32), tolerance, SIZES).passed


def test_the_declared_bytes_are_half_of_a_float32_dot_products():
    n = LAB.spec.sizes["cuda"][-1]["n"]
    assert number_value(LAB.spec.work.bytes, {"n": n}) < 0.51 * 8 * n
