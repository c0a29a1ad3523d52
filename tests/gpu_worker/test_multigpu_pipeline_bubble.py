"""Pipeline bubbles and the GPipe and 1F1B timetables, against hand-worked values and closed forms."""

import pytest

from gpu_worker.multigpu.pipeline import bubble_fraction, bubble_over_ideal, makespan, peak_in_flight, timetable


def test_the_bubble_is_p_minus_1_over_m_plus_p_minus_1():
    assert bubble_fraction(4, 8) == pytest.approx(3 / 11)
    assert bubble_fraction(1, 8) == 0
    assert bubble_over_ideal(4, 8) == pytest.approx(3 / 8)


def test_interleaving_v_chunks_shrinks_the_bubble():
    assert bubble_fraction(8, 16, v=2) == pytest.approx(7 / 39)
    assert bubble_over_ideal(8, 16, v=4) == pytest.approx(7 / 64)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize(("p", "m"), [(1, 1), (2, 5), (4, 2), (4, 8), (8, 3)])
def test_both_schedules_take_2_m_plus_p_minus_1_slots_so_the_bubble_formula_holds(schedule, p, m):
    slots = makespan(schedule, p, m)
    assert slots == 2 * (m + p - 1)
    assert 1 - 2 * m / slots == pytest.approx(bubble_fraction(p, m))


@pytest.mark.parametrize(("p", "m"), [(2, 5), (4, 2), (4, 6), (8, 3)])
def test_1f1b_slots_have_a_closed_form(p, m):
    forward, backward = timetable("1f1b", p, m)
    for s in range(p):
        for j in range(m):
            assert forward[s][j] == (s + j if j <= p - 1 - s else 2 * j + s)
            assert backward[s][j] == 2 * p - 1 - s + 2 * j


def _peak(forward, backward, s):
    m = len(forward[s])
    return max(sum(1 for j in range(m) if forward[s][j] <= t < backward[s][j]) for t in range(2 * (m + 20)))


@pytest.mark.parametrize(("p", "m"), [(4, 8), (4, 2)])
def test_1f1b_holds_at_most_p_micro_batches_and_gpipe_all_of_them(p, m):
    for schedule in ("gpipe", "1f1b"):
        forward, backward = timetable(schedule, p, m)
        assert _peak(forward, backward, 0) == peak_in_flight(schedule, p, m)
