"""An accepted run is judged against its exercise's goals, each on the backend that measures it, with a hint.

The memory reports here are the simulator's own (`build_report` over accesses laid
out as a warp would make them); the metrics are `work_metrics` over a stated time.
"""

from __future__ import annotations

from gpu_worker.exercise import goals
from gpu_worker.protocol import GoalSpec, WorkSpec
from gpu_worker.science.memtrace_report import Site, Space, build_report
from gpu_worker.science.metrics import Ceilings, work_metrics

COALESCED = GoalSpec(name="coalesced", metric="sectors_per_request", target=4)
NO_CONFLICTS = GoalSpec(name="no bank conflicts", metric="bank_conflict_ways", target=1)
NEAR_ROOF = GoalSpec(name="near the copy roof", metric="roof_percent", target=70)


def _strided_load(stride: int) -> dict:
    """One warp loading floats `stride` elements apart, from line 8 of the learner's file."""
    site = Site(line=8, column=None, expression="a[i * s]", access="load", space=Space("global", (4096,), 4))
    accesses = [("k", 0, (0, 0, 0), 0, 0, lane, lane * stride * 4, 4) for lane in range(32)]
    return build_report(accesses, {"k": site}).model_dump(mode="json")


def test_a_strided_load_misses_the_coalescing_goal_with_a_hint_naming_its_line():
    [result] = goals.judge([COALESCED], "sim", "accepted", memory=_strided_load(32))
    assert result.met is False and result.measured == 32
    assert result.hint.startswith("line 8: your load of `a[i * s]` touches 32 sectors per request")
    assert "32 elements apart" in result.hint


def test_a_coalesced_load_meets_it():
    [result] = goals.judge([COALESCED], "sim", "accepted", memory=_strided_load(1))
    assert result.met is True and result.measured == 4 and result.hint == ""


def test_a_kernel_without_shared_memory_has_no_bank_conflicts():
    [result] = goals.judge([NO_CONFLICTS], "sim", "accepted", memory=_strided_load(1))
    assert result.met is True and result.measured == 1


def test_only_an_accepted_run_is_judged_and_only_where_the_figure_is_measured():
    assert goals.judge([COALESCED], "sim", "wrong_answer", memory=_strided_load(32)) == []
    assert goals.judge([COALESCED], "cuda", "accepted") == []
    assert goals.judge([NEAR_ROOF], "sim", "accepted") == []


def test_the_roof_goal_reads_the_largest_timed_size_and_says_memory_bound():
    ceilings = Ceilings(source="measured", copy_bandwidth=4.0e12, fp32=60e12)
    work = WorkSpec(bytes="8 * n * n", flops="0")
    sizes = [
        {"index": 0, **work_metrics(work, {"n": 1024}, 10e-6, ceilings).model_dump()},
        {"index": 1, **work_metrics(work, {"n": 8192}, 8 * 8192**2 / 1.52e12, ceilings).model_dump()},
    ]
    [result] = goals.judge([NEAR_ROOF], "cuda", "accepted", metrics={"sizes": sizes})
    assert result.met is False and round(result.measured) == 38
    assert result.hint.startswith("you are at 38% of the copy roof and memory-bound")


def test_a_roof_goal_that_names_a_size_reads_that_size_not_the_largest():
    ceilings = Ceilings(source="measured", copy_bandwidth=4.0e12, fp32=60e12)
    work = WorkSpec(bytes="8 * n", flops="0")
    n = 2**25
    sizes = [
        {"index": 0, **work_metrics(work, {"n": n}, 8 * n / 0.8e12, ceilings).model_dump()},  # 20% of the roof
        {"index": 1, **work_metrics(work, {"n": n}, 8 * n / 3.2e12, ceilings).model_dump()},  # 80%
    ]
    at_first = GoalSpec(name="near the roof at 16 warps", metric="roof_percent", target=50, size=0)
    [first] = goals.judge([at_first], "cuda", "accepted", metrics={"sizes": sizes})
    [largest] = goals.judge([NEAR_ROOF], "cuda", "accepted", metrics={"sizes": sizes})
    assert (first.met, round(first.measured)) == (False, 20)
    assert (largest.met, round(largest.measured)) == (True, 80)
    [untimed] = goals.judge([at_first], "cuda", "accepted", metrics={"sizes": sizes[1:]})
    assert untimed.met is None and "size 0 was not timed" in untimed.reason


def test_a_missed_goal_is_in_the_verdicts_message_and_a_missing_figure_counts_neither_way():
    missed = goals.judge([COALESCED], "sim", "accepted", memory=_strided_load(32))
    unmeasured = goals.judge([NEAR_ROOF], "cuda", "accepted", metrics=None)
    assert unmeasured[0].met is None and goals.all_met(unmeasured) is None
    text = goals.message("all 1 checks passed", [*missed, *unmeasured])
    assert text == (
        "all 1 checks passed; correct, not yet fast (1 of 1 goals missed): "
        "coalesced: 32 sectors per request, target at most 4 sectors per request"
    )
    assert goals.result_fields(missed)["goals_met"] is False


def test_occupancy_limited_by_registers_says_so_and_how_to_cap_them():
    occupancy = {"occupancy": 0.25, "limited_by": "registers", "registers_per_thread": 128, "threads_per_block": 256}
    goal = GoalSpec(name="half the warps resident", metric="occupancy_percent", target=50)
    [result] = goals.judge([goal], "sim", "accepted", occupancy=occupancy)
    assert result.met is False and result.measured == 25
    assert "limited by registers (128 per thread)" in result.hint and "__launch_bounds__(256" in result.hint


def _split_warp_store() -> dict:
    """One warp whose store on line 12 ran with only the even lanes active (a branch split it)."""
    site = Site(line=12, column=None, expression="out[i]", access="store", space=Space("global", (64,), 4))
    accesses = [("k", 0, (0, 0, 0), 0, 0, lane, lane * 4, 4) for lane in range(0, 32, 2)]
    return build_report(accesses, {"k": site}).model_dump(mode="json")


def test_a_store_inside_a_branch_that_split_the_warp_reads_16_active_lanes():
    goal = GoalSpec(name="no warp runs both paths", metric="lanes_per_request", target=32)
    [result] = goals.judge([goal], "sim", "accepted", memory=_split_warp_store())
    assert result.met is False and result.measured == 16
    assert result.hint.startswith("line 12: `out[i]` ran with 16 of 32 lanes active per warp request")


def test_traffic_is_the_traced_sectors_over_the_exercises_compulsory_bytes():
    goal = GoalSpec(name="each element asked for once", metric="traffic_ratio", target=1.25)
    work = WorkSpec(bytes="4 * n")  # 32 floats read once: 128 bytes
    [once] = goals.judge([goal], "sim", "accepted", memory=_strided_load(1), work=work, sizes={"n": 32})
    [spread] = goals.judge([goal], "sim", "accepted", memory=_strided_load(2), work=work, sizes={"n": 32})
    assert once.met is True and once.measured == 1.0
    assert spread.met is False and spread.measured == 2.0
    assert (
        spread.reason
        == "each element asked for once: 2 x the compulsory bytes, target at most 1.25 x the compulsory bytes"
    )


def test_a_run_without_a_memory_report_says_so_not_that_nothing_was_traced():
    # A Triton kernel run by Triton's interpreter, the CPU tier's fallback: its loads ran, but nothing traced them.
    [sectors, ways] = goals.judge([COALESCED, NO_CONFLICTS], "sim", "accepted", memory=None)
    assert sectors.met is None and ways.met is None and goals.all_met([sectors, ways]) is None
    assert sectors.reason == f"coalesced: not measured ({goals.NO_MEMORY_REPORT})"
    assert "Triton" in ways.reason and "traced" not in ways.reason
