"""The memory-access goals judged from Nsight Compute's own logs (`check-labs --ncu-goals`), without a GPU.

The logs are the H200's (tests/gpu_worker/fixtures/ncu, ncu 2025.3.1): stride_32 reads one float in every 32
(its loads touch 32 sectors per request, its stores 4, no shared memory); tiled_32x32 reads its unpadded
tile down a column (32-way bank conflicts on the shared loads, none on the stores), n = 4096, each element
read once and written once. The goals' own run asks
ncu for `GOAL_METRICS` alone, so its log is cut down to those columns here, as ncu prints it.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from engine_factories import alices_job
from test_ncu_source_page import IN_WARP_BRANCH, ONE_PATH_A_WARP, page

from gpu_worker import profiling
from gpu_worker.exercise import profiled_goals
from gpu_worker.exercise.labspec import find_lab
from gpu_worker.measurement import ncu, ncu_source
from gpu_worker.protocol import GoalSpec
from gpu_worker.science.metrics import work_metrics

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"
COALESCED = GoalSpec(name="coalesced loads and stores", metric="sectors_per_request", target=4)
NO_CONFLICTS = GoalSpec(name="no bank conflicts", metric="bank_conflict_ways", target=1)
ONCE = GoalSpec(name="each element asked for once", metric="traffic_ratio", target=1.25)
OCCUPANCY = GoalSpec(name="keeps its warps", metric="occupancy_percent", target=25)
ALL_LANES = GoalSpec(name="no warp runs both paths", metric="lanes_per_request", target=32)


def goals_only_log(name: str) -> str:
    """The real log with only the identity columns and `ncu.GOAL_METRICS`: what the goals' ncu run prints."""
    lines = (FIXTURES / f"ncu-{name}.csv").read_text().splitlines()
    prof = [line for line in lines if not line.startswith('"')]
    rows = list(csv.reader(line for line in lines if line.startswith('"')))
    keep = [i for i, column in enumerate(rows[0]) if "__" not in column or column in ncu.GOAL_METRICS]
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for row in rows:
        writer.writerow([row[i] for i in keep])
    return "\n".join(prof) + "\n" + out.getvalue()


def facts_of(name: str, entry: str) -> dict:
    return {**ncu.parse_log(goals_only_log(name), entry), "source": "Nsight Compute 2025.3.1.0 on NVIDIA H200"}


@pytest.fixture(scope="module")
def stride_32() -> dict:
    return facts_of("stride_32", "copy_stride")


@pytest.fixture(scope="module")
def tiled() -> dict:
    return facts_of("tiled_32x32", "tiled_transpose")


def test_the_goals_run_asks_only_for_counters_the_full_profile_already_asks_for():
    assert set(ncu.GOAL_METRICS) < set(ncu.METRICS)
    argv = ncu.command("/opt/ncu", "transpose", "/tmp/log.csv", ["python3"], sections=(), metrics=ncu.GOAL_METRICS)
    assert "--section" not in argv
    assert argv[argv.index("--metrics") + 1] == ",".join(ncu.GOAL_METRICS)
    assert goals_only_log("stride_32").count('"l1tex__') == len([m for m in ncu.GOAL_METRICS if m.startswith("l1tex")])


def test_a_stride_32_copy_misses_the_coalescing_goal_with_32_sectors_per_request(stride_32):
    record = profiled_goals.record([COALESCED], stride_32)
    assert record["available"] and record["source"] == "Nsight Compute 2025.3.1.0 on NVIDIA H200"
    (goal,) = record["goals"]
    assert (goal["measured"], goal["met"], goal["comparison"]) == (32, False, "at most")
    assert goal["reason"] == (
        "coalesced loads and stores: 32 sectors per request (global loads 32, stores 4), "
        "target at most 4 sectors per request"
    )


@pytest.mark.parametrize(("access", "measured", "met"), [("load", 32, False), ("store", 4, True)])
def test_a_goal_on_one_access_reads_that_access_alone(stride_32, access, measured, met):
    goal = COALESCED.model_copy(update={"access": access})
    (judged,) = profiled_goals.record([goal], stride_32)["goals"]
    assert (judged["measured"], judged["met"]) == (measured, met)


def test_a_kernel_that_counted_no_shared_access_has_no_bank_conflicts(stride_32):
    (judged,) = profiled_goals.record([NO_CONFLICTS], stride_32)["goals"]
    assert (judged["measured"], judged["met"]) == (1, True)
    assert "no shared-memory access" in judged["reason"]


def test_an_unpadded_tile_read_down_a_column_misses_no_bank_conflicts_by_32_ways(tiled):
    coalesced, conflicts = profiled_goals.record([COALESCED, NO_CONFLICTS], tiled)["goals"]
    assert (coalesced["measured"], coalesced["met"]) == (4, True)
    assert conflicts["measured"] == pytest.approx(32.29) and conflicts["met"] is False
    assert "(shared loads 32.29, stores 1.01)" in conflicts["reason"]


@pytest.mark.parametrize(("ways", "met"), [(1.03, True), (1.1, True), (1.2, False), (2.0, False)])
def test_a_figure_within_a_tenth_of_its_target_meets_it(tiled, ways, met):
    facts = {**tiled, "shared_load_ways": ways, "shared_store_ways": 1.0}
    (judged,) = profiled_goals.record([NO_CONFLICTS], facts)["goals"]
    assert (judged["measured"], judged["met"]) == (ways, met)


def test_only_the_memory_access_goals_are_profiled():
    assert profiled_goals.profiled([OCCUPANCY, COALESCED, ONCE, NO_CONFLICTS]) == [COALESCED, ONCE, NO_CONFLICTS]
    lanes, _roof = find_lab("divergence").spec.goals  # warp lanes and the roof: ncu measures the lanes
    assert profiled_goals.profiled(find_lab("divergence").spec.goals) == [lanes]


def compulsory(slug: str, n: int) -> float:
    """A lab's compulsory bytes at size n, as `profiling.declared_bytes` evaluates them for the profiled size."""
    return float(work_metrics(find_lab(slug).spec.harness().work, {"n": n}).bytes)


def test_a_tiled_transpose_asks_for_its_compulsory_bytes_once_and_meets_the_traffic_goal(tiled):
    # The transpose lab's 8 n^2 at the log's n = 4096 (a 128 x 128 grid of 32 x 32 tiles): 2^21 load sectors
    # and 2^21 store sectors of 32 bytes are exactly 134,217,728 bytes. DRAM saw 0.85 x: its writes sat in the L2.
    facts = {**tiled, "declared_bytes": compulsory("transpose", 4096)}
    (judged,) = profiled_goals.record([ONCE], facts)["goals"]
    assert (judged["measured"], judged["met"], judged["comparison"]) == (1.0, True, "at most")
    assert judged["reason"] == (
        "each element asked for once: 1 x the compulsory bytes (global requests 134,217,728 bytes, "
        "compulsory 134,217,728), target at most 1.25 x the compulsory bytes"
    )


def test_a_stride_32_copy_asks_for_four_and_a_half_times_its_compulsory_bytes(stride_32):
    # 4M floats copied (the coalescing lab's 8 n^2 at n = 2048): 32 sectors per load and 4 per store, 4.5 x in all.
    # The DRAM's 8.5 x (64-byte fetches) is not the goal's figure.
    facts = {**stride_32, "declared_bytes": compulsory("coalescing", 2048)}
    (judged,) = profiled_goals.record([ONCE], facts)["goals"]
    assert (judged["measured"], judged["met"]) == (4.5, False)
    dram = ncu.parse_log((FIXTURES / "ncu-stride_32.csv").read_text(), "copy_stride")["dram_bytes"]  # the full log
    assert str(ncu.excess_traffic(dram, facts["declared_bytes"])).startswith("Your kernel moved 8.5x")


@pytest.mark.parametrize(("target", "met"), [(4, False), (4.1, True), (4.5, True)])
def test_the_traffic_goal_is_met_within_a_tenth_of_its_target(stride_32, target, met):
    facts = {**stride_32, "declared_bytes": compulsory("coalescing", 2048)}
    (judged,) = profiled_goals.record([ONCE.model_copy(update={"target": target})], facts)["goals"]
    assert judged["met"] is met


def test_a_size_whose_bytes_the_exercise_does_not_declare_leaves_the_traffic_unmeasured(tiled):
    (judged,) = profiled_goals.record([ONCE], {**tiled, "declared_bytes": None})["goals"]
    assert judged["measured"] is None and judged["met"] is None
    assert "declares no bytes at this size" in judged["reason"]


def lanes_facts(text: str, **more) -> dict:
    """Facts of a goals profile whose source-counter run printed `text` (see test_ncu_source_page)."""
    sites = ncu_source.memory_sites(ncu_source.parse_page(text, "two_paths"))
    return {
        **more,
        "available": True,
        "lanes": {"available": True, "source": "Nsight Compute 2025.3.1.0", "sites": sites},
    }


def test_a_warp_split_between_two_paths_misses_the_lanes_goal_with_16_of_32():
    (judged,) = profiled_goals.record([ALL_LANES], lanes_facts(IN_WARP_BRANCH))["goals"]
    assert (judged["measured"], judged["met"], judged["comparison"]) == (16, False, "at least")
    assert judged["reason"] == (
        "no warp runs both paths: 16 active lanes per request (fewest of 4 SASS sites: "
        "load `@!P0 LDG.E R2, desc[UR4][R2.64]` at 0x7f0000000080), target at least 32 active lanes per request"
    )


def test_one_path_a_warp_meets_the_lanes_goal():
    (judged,) = profiled_goals.record([ALL_LANES], lanes_facts(ONE_PATH_A_WARP))["goals"]
    assert (judged["measured"], judged["met"]) == (32, True)


def test_a_lanes_goal_on_loads_reads_the_loads_alone_and_atomics_only_count_for_any():
    text = page(
        [
            ("0x10", "LDG.E.U16 R2, desc[UR4][R2.64]", 64, 64 * 32),
            ("0x20", "@!P0 STG.E [R4.64], R7", 64, 64),  # thread zero writes the block's sum
            ("0x30", "@!P0 RED.E.ADD.F32.FTZ.RN.STRONG.GPU [R4.64], R7", 64, 128),
        ]
    )
    figures = {}
    for access in ("load", "store", "any"):
        (judged,) = profiled_goals.record([ALL_LANES.model_copy(update={"access": access})], lanes_facts(text))["goals"]
        figures[access] = judged["measured"]
    assert figures == {"load": 32, "store": 1, "any": 1}


def test_a_lanes_goal_on_shared_memory_reads_shared_sites_and_generic_ones_count_as_global():
    text = page([("0x10", "LD.E R2, [R2.64]", 10, 160), ("0x20", "LDS R3, [R5]", 10, 320)])
    shared, global_ = (ALL_LANES.model_copy(update={"space": space}) for space in ("shared", "global"))
    judged = profiled_goals.record([shared, global_], lanes_facts(text))["goals"]
    assert [g["measured"] for g in judged] == [32, 16]


@pytest.mark.parametrize(("lanes", "met"), [(31.8, True), (31.7, True), (31.5, False), (16, False)])
def test_a_lanes_figure_within_a_hundredth_under_its_target_meets_it(lanes, met):
    facts = {"available": True, "lanes": {"available": True, "sites": [
        {"address": "0x10", "sass": "STG.E [R2.64], R5", "space": "global", "access": "store", "lanes": lanes},
    ]}}  # fmt: skip
    (judged,) = profiled_goals.record([ALL_LANES], facts)["goals"]
    assert judged["met"] is met


def test_a_source_page_that_did_not_come_leaves_the_lanes_goal_unmeasured_and_the_others_judged(stride_32):
    failed = profiling.unavailable(
        "Nsight Compute's source page has no Predicated-On Thread Instructions Executed column", "columns: Address"
    )
    record = profiled_goals.record([ALL_LANES, COALESCED], {**stride_32, "lanes": failed})
    lanes, coalesced = record["goals"]
    assert (lanes["measured"], lanes["met"], lanes["comparison"]) == (None, None, "at least")
    assert lanes["reason"] == (
        "no warp runs both paths: not measured (Nsight Compute's source page has no Predicated-On Thread "
        "Instructions Executed column)"
    )
    assert record["lanes_detail"] == "columns: Address"
    assert (coalesced["measured"], coalesced["met"]) == (32, False)


def test_a_profile_without_a_source_counter_run_says_so_for_the_lanes_goal(stride_32):
    (judged,) = profiled_goals.record([ALL_LANES], stride_32)["goals"]
    assert judged["met"] is None and judged["reason"].endswith("(no source-counter profile was taken)")


def test_a_kernel_whose_counted_sites_hold_no_store_leaves_a_store_goal_unmeasured():
    text = page([("0x10", "LDG.E R2, [R2.64]", 10, 320)])
    (judged,) = profiled_goals.record([ALL_LANES.model_copy(update={"access": "store"})], lanes_facts(text))["goals"]
    assert judged["met"] is None
    assert judged["reason"].endswith("(Nsight Compute's source counters show no global store instruction that ran)")


def test_a_profile_that_could_not_be_taken_says_why_for_every_goal():
    facts = profiling.unavailable(
        "another profiler was using this GPU's counters", "==ERROR== ERR_NVGPUCTRBUSY", source="Nsight Compute on X"
    )
    record = profiled_goals.record([COALESCED, NO_CONFLICTS], facts)
    assert record["available"] is False and record["reason"] == "another profiler was using this GPU's counters"
    assert record["detail"] == "==ERROR== ERR_NVGPUCTRBUSY" and record["source"] == "Nsight Compute on X"
    assert [g["met"] for g in record["goals"]] == [None, None]
    assert record["goals"][1]["reason"] == (
        "no bank conflicts: not measured (another profiler was using this GPU's counters)"
    )


def test_no_profile_at_all_is_said_in_words():
    record = profiled_goals.record([COALESCED], None)
    assert record["available"] is False and "no profile was taken" in record["reason"]
    assert record["goals"][0]["measured"] is None


def test_a_log_without_the_shared_counters_leaves_the_ways_unmeasured(stride_32):
    facts = {**stride_32, "raw": {}}
    (judged,) = profiled_goals.record([NO_CONFLICTS], facts)["goals"]
    assert judged["met"] is None and "no shared-memory counters" in judged["reason"]


def _runs(slug: str) -> list[dict]:
    return [{"sizes": sizes} for sizes in find_lab(slug).spec.harness().sizes["cuda"]]


def test_the_goals_are_profiled_at_the_size_the_roof_goal_names_else_the_largest():
    occupancy = find_lab("occupancy")
    job = alices_job(occupancy.references["numba"], lab=occupancy)
    runs = _runs("occupancy")
    assert profiling.goals_index(job, runs, profiling.declared_bytes(job, runs)) == 0  # roof_percent's size: 0
    vector_add = alices_job(find_lab("vector-add").references["numba"])
    runs = _runs("vector-add")
    assert profiling.goals_index(vector_add, runs, profiling.declared_bytes(vector_add, runs)) == len(runs) - 1


def test_the_goals_profile_takes_their_counters_alone_at_their_size(monkeypatch):
    taken = []

    def profile(job, runs, request, limits, index, declared, device, **asked):  # stands in for the sandboxed ncu run
        taken.append((index, asked))
        return facts_of("tiled_32x32", "tiled_transpose")

    monkeypatch.setattr(profiling, "_profile", profile)
    occupancy = find_lab("occupancy")
    job = alices_job(occupancy.references["numba"], lab=occupancy)
    runs = [{**run, "seed": 1} for run in _runs("occupancy")]
    events = []
    facts = profiling.profile_goals(job, runs, {}, lambda kind, **f: events.append(kind), device="NVIDIA H200")
    assert taken == [(0, {"sections": (), "metrics": ncu.GOAL_METRICS})]
    assert facts["index"] == 0 and facts["sizes"] == runs[0]["sizes"] and events == ["profile"]


def _divergence_goals_profile(monkeypatch, lanes: dict | Exception) -> tuple[dict, list]:
    """profile_goals for the divergence reference, with both ncu runs stood in for: the counters' (the tiled log)
    and the source counters' (`lanes`, or raising it)."""
    taken = []

    def counters(job, runs, request, limits, index, declared, device, **asked):
        taken.append(("counters", index))
        return facts_of("tiled_32x32", "tiled_transpose")

    def source_counters(job, runs, request, index, device, backend):
        taken.append(("source", index))
        if isinstance(lanes, Exception):
            raise lanes
        return lanes

    monkeypatch.setattr(profiling, "_profile", counters)
    monkeypatch.setattr(profiling, "_lanes", source_counters)
    divergence = find_lab("divergence")
    job = alices_job(divergence.references["numba"], lab=divergence)
    runs = [{**run, "seed": 1} for run in _runs("divergence")]
    facts = profiling.profile_goals(job, runs, {}, lambda kind, **f: None, device="NVIDIA H100")
    return facts, taken


def test_an_exercise_with_a_lanes_goal_gets_a_second_ncu_run_for_it_at_the_same_size(monkeypatch):
    lanes = {"available": True, "source": "Nsight Compute 2025.3.1.0 on NVIDIA H100", "sites": []}
    facts, taken = _divergence_goals_profile(monkeypatch, lanes)
    assert taken == [("counters", 1), ("source", 1)]  # divergence's largest GPU size
    assert facts["lanes"] == lanes and facts["shared_load_ways"] == pytest.approx(32.29)


def test_a_source_counter_run_that_breaks_leaves_the_counters_whole(monkeypatch):
    facts, _ = _divergence_goals_profile(monkeypatch, RuntimeError("ncu vanished"))
    assert facts["available"] and facts["shared_load_ways"] == pytest.approx(32.29)
    assert facts["lanes"] == {
        "available": False,
        "reason": "the source-counter run failed on the worker",
        "detail": "RuntimeError: ncu vanished",
    }
