"""Inputs are reproducible from the seed, fresh for every submission, and outputs start poisoned."""

from __future__ import annotations

import numpy as np

from gpu_worker.exercise.inputs import INT_SENTINEL, input_arrays, job_seed, make_arguments
from gpu_worker.exercise.labspec import find_lab

ARGS = find_lab("vector-add").spec.harness().args_for("cuda")


def test_the_same_seed_gives_the_same_inputs_bit_for_bit():
    first, second = make_arguments(ARGS, {"n": 100}, 42), make_arguments(ARGS, {"n": 100}, 42)
    assert np.array_equal(first["a"], second["a"]) and np.array_equal(first["b"], second["b"])


def test_every_submission_and_every_size_gets_its_own_seed():
    seeds = {job_seed(1234, sid, size) for sid in range(50) for size in range(3)}
    assert len(seeds) == 150
    a1 = make_arguments(ARGS, {"n": 100}, job_seed(1234, 1, 0))["a"]
    a2 = make_arguments(ARGS, {"n": 100}, job_seed(1234, 2, 0))["a"]
    assert not np.array_equal(a1, a2)


def test_arrays_have_the_declared_dtype_and_shape_and_scalars_their_value():
    values = make_arguments(ARGS, {"n": 1000}, 7)
    assert values["a"].dtype == np.float32 and values["a"].shape == (1000,)
    assert values["n"] == 1000 and isinstance(values["n"], np.int32)
    assert values["a"].min() >= -1.0 and values["a"].max() < 1.0


def test_outputs_start_as_nan():
    assert np.isnan(make_arguments(ARGS, {"n": 10}, 7)["c"]).all()


def test_integer_outputs_start_as_the_sentinel():
    from gpu_worker.exercise.inputs import poison

    assert (poison("int32", (4,)) == INT_SENTINEL["int32"]).all()


def test_the_expected_formula_sees_inputs_scalars_and_sizes_but_no_outputs():
    names = input_arrays(ARGS, {"n": 10}, 7)
    assert {"a", "b", "n"} <= set(names) and "c" not in names


def test_seeds_accept_negative_and_huge_ids():
    assert job_seed(-1, -5, 0) != job_seed(-1, -6, 0)
    assert 0 <= job_seed(2**40, 2**62, 9) < 2**64
