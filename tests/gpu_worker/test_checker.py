"""The checker compares outputs with a tolerance, never passes NaN, and lists the first mismatches."""

from __future__ import annotations

import numpy as np

from gpu_worker.exercise.checker import MAX_MISMATCHES, compare
from gpu_worker.exercise.inputs import poison
from gpu_worker.protocol import Tolerance

TOL = Tolerance(rtol=1e-6, atol=1e-6)


def test_equal_arrays_pass_with_zero_error():
    a = np.arange(10, dtype=np.float32)
    info = compare("c", a, a.copy(), TOL, {"n": 10})
    assert info.passed and info.mismatch_count == 0 and info.max_abs_error == 0.0 and info.sizes == {"n": 10}


def test_differences_within_the_tolerance_pass_and_beyond_it_fail():
    expected = np.full(4, 100.0, dtype=np.float32)
    assert compare("c", expected, expected * (1 + 5e-7), TOL).passed
    info = compare("c", expected, expected + np.float32([0, 0, 0.01, 0]), TOL)
    assert not info.passed and info.mismatch_count == 1 and info.mismatches[0].index == 2
    assert abs(info.max_abs_error - 0.01) < 1e-4


def test_nan_never_passes_not_even_against_nan():
    expected = np.array([1.0, np.nan], dtype=np.float32)
    info = compare("c", expected, np.array([1.0, np.nan], dtype=np.float32), TOL)
    assert not info.passed and info.mismatch_count == 1


def test_an_unwritten_output_is_called_never_written():
    info = compare("c", np.ones(3, np.float32), poison("float32", (3,)), TOL)
    assert info.mismatch_count == 3 and all(m.note and "never written" in m.note for m in info.mismatches)
    assert "3 of them never written" in info.message
    assert info.max_abs_error is None  # no meaningful maximum with NaN in play, rather than a reassuring 0.0


def test_only_the_first_mismatches_are_listed():
    info = compare("c", np.zeros(100, np.float32), np.ones(100, np.float32), TOL)
    assert info.mismatch_count == 100 and len(info.mismatches) == MAX_MISMATCHES


def test_integers_must_match_exactly_and_the_sentinel_means_never_written():
    expected = np.arange(4, dtype=np.int32)
    got = expected.copy()
    got[1] = poison("int32", (1,))[0]
    info = compare("c", expected, got, Tolerance(rtol=0.5, atol=5))
    assert not info.passed and info.mismatches[0].index == 1 and "never written" in info.mismatches[0].note


def test_two_dimensional_mismatches_give_row_and_column():
    expected = np.zeros((3, 4), np.float32)
    got = expected.copy()
    got[2, 1] = 5
    assert compare("c", expected, got, TOL).mismatches[0].index == [2, 1]


def test_a_wrong_shape_fails_with_a_message():
    info = compare("c", np.zeros(4), np.zeros(5, np.float32), TOL)
    assert not info.passed and "shape" in info.message


def test_nan_and_infinity_travel_as_strings_in_the_json():
    info = compare("c", np.array([np.inf], np.float32), np.array([np.nan], np.float32), TOL)
    wire = info.to_wire()["mismatches"][0]
    assert wire["expected"] == "Infinity" and wire["got"] == "NaN"
