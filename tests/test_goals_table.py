"""bench/goals_table.py: check-labs' output (its JSON or its printed text) becomes docs/curriculum-goals.md."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN22 = ROOT / "bench" / "results" / "2026-12-06-run22-call2-check-labs-cuda.txt"


@pytest.fixture(scope="module")
def goals_table():
    spec = importlib.util.spec_from_file_location("goals_table", ROOT / "bench" / "goals_table.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["goals_table"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("goals_table", None)


def vector_add_cases(roof: float | None = 71.04) -> dict:
    """What `check-labs --backend cuda --json` writes for two of vector-add's samples."""
    goals = [
        {"name": "coalesced loads and stores", "metric": "sectors_per_request", "target": 4, "measured": None},
        {"name": "near the memory roof", "metric": "roof_percent", "target": 60, "measured": roof},
    ]
    return {
        "backend": "cuda",
        "cases": [
            {"lab": "vector-add", "case": "off-by-one", "language": "numba", "expected": "wrong_answer",
             "got": "accepted", "ok": False, "message": "all 6 checks passed", "goals": []},
            {"lab": "vector-add", "case": "reference-cuda", "language": "cuda", "expected": "accepted (goals met)",
             "got": "accepted (goals met)", "ok": True, "message": "", "goals": goals},
        ],
    }  # fmt: skip


def test_it_reads_the_printed_check_labs_with_each_failures_expected_verdict(goals_table):
    backend, cases = goals_table.read_check_labs(RUN22)
    assert backend == "cuda" and len(cases) == 163 and sum(c.ok for c in cases) == 150
    failed = next(c for c in cases if (c.lab, c.case) == ("softmax-online", "reference-cuda"))
    assert (failed.expected, failed.got) == ("accepted", "compile_error") and "INFINITY" in failed.message
    ok = next(c for c in cases if (c.lab, c.case) == ("vector-add", "reference-cuda"))
    assert ok.expected == ok.got == "accepted (goals met)"


def test_each_goal_has_its_target_and_the_references_figure(goals_table, tmp_path):
    source = tmp_path / "check-labs-cuda.json"
    source.write_text(json.dumps(vector_add_cases()))
    session = tmp_path / "stdout.txt"
    session.write_text("2026-12-07T10:00:00Z\ncommit abc1234 a message\nNVIDIA H200, GPU-1, 580.1, 1980 MHz\n")
    out = tmp_path / "goals.md"
    goals_table.main(["--check-labs", str(source), "--session", str(session), "--out", str(out)])
    text = out.read_text()
    assert "NVIDIA H200, 2026-12-07T10:00:00Z, commit abc1234, backend cuda" in text
    assert "1 of 2 samples got the verdict they must get" in text
    assert "| near the memory roof | at least 60 % of the roof | 71 |" in text
    assert "| coalesced loads and stores | at most 4 sectors per request | not on cuda: judged on sim |" in text
    samples = text[text.index("| sample |") :].splitlines()
    assert samples[2].startswith("| reference-cuda |")  # in the lab's order, not the order they ended in
    assert "| off-by-one | numba | wrong_answer | accepted: all 6 checks passed | **FAIL** |" in text
    assert "Not in this run:" in text and "grid-stride" in text


def test_a_later_runs_exercises_replace_the_first_runs_and_the_header_names_it(goals_table, tmp_path):
    first, later = tmp_path / "first.json", tmp_path / "later.json"
    first.write_text(json.dumps(vector_add_cases(roof=71.04)))
    later.write_text(json.dumps(vector_add_cases(roof=64.5)))
    session = tmp_path / "later-stdout.txt"
    session.write_text("2026-12-07T16:00:00Z\ncommit 1234567 stale\nNVIDIA H100 80GB HBM3, GPU-2, 580.1, 1980 MHz\n")
    out = tmp_path / "goals.md"
    goals_table.main(
        ["--check-labs", str(first), "--again", str(later), "--again-session", str(session), "--out", str(out)]
    )
    text = out.read_text()
    assert "| near the memory roof | at least 60 % of the roof | 64.5 |" in text and "71 |" not in text
    assert (
        "Measured again in a later run" in text and "NVIDIA H100 80GB HBM3, 2026-12-07T16:00:00Z): `vector-add`" in text
    )
    assert "1234567" not in text  # a device copy's commit line may be stale: the later run names no commit
    assert "1 of 2 samples" in text  # the later run's cases, not both runs'


def test_a_figure_this_run_lacks_comes_from_a_goals_file_marked_with_it(goals_table, tmp_path):
    source = tmp_path / "check-labs-cuda.json"
    source.write_text(json.dumps(vector_add_cases(roof=None)))
    earlier = tmp_path / "goals-h200.json"
    earlier.write_text(json.dumps([{"lab": "vector-add", "case": "reference-cuda",
                                    "goals": [{"name": "near the memory roof", "measured": 70.8}]}]))  # fmt: skip
    out = tmp_path / "goals.md"
    goals_table.main(["--check-labs", str(source), "--goals", str(earlier), "--out", str(out)])
    text = out.read_text()
    assert "| near the memory roof | at least 60 % of the roof | 70.8 [a] |" in text
    assert f"[a] `{earlier.as_posix()}`" in text and "unknown GPU" in text


H100 = "Nsight Compute 2025.3.1.0 on NVIDIA H100 80GB HBM3"


def ncu_goals(measured: float | None = 4.0, reason: str = "") -> dict:
    """What `check-labs --ncu-goals` writes for vector-add's one memory-access goal (`ncu_goals`)."""
    goal = {
        "name": "coalesced loads and stores",
        "metric": "sectors_per_request",
        "target": 4,
        "comparison": "at most",
        "measured": measured,
        "met": None if measured is None else measured <= 4.4,
    }
    if reason:
        return {"available": False, "reason": reason, "goals": [{**goal, "measured": None, "met": None}]}
    return {"source": H100, "index": 2, "sizes": {"n": 16777213}, "available": True, "tolerance": 0.1,
            "goals": [goal]}  # fmt: skip


def with_ncu(reference_cuda: dict | None, off_by_one: dict | None = None) -> dict:
    """vector_add_cases, a reference-numba beside reference-cuda, and the given `ncu_goals` records."""
    document = vector_add_cases()
    numba = {**document["cases"][1], "case": "reference-numba", "language": "numba"}
    document["cases"].append(numba)
    for case, record in zip(document["cases"][:2], (off_by_one, reference_cuda), strict=True):
        if record is not None:
            case["ncu_goals"] = record
    return document


def render(goals_table, tmp_path, document: dict) -> str:
    source = tmp_path / "check-labs-cuda-ncu.json"
    source.write_text(json.dumps(document))
    out = tmp_path / "goals.md"
    goals_table.main(["--check-labs", str(source), "--out", str(out)])
    return out.read_text()


def test_a_goal_nsight_compute_measured_shows_its_figure_marked_and_sourced(goals_table, tmp_path):
    text = render(goals_table, tmp_path, with_ncu(ncu_goals(4.0)))
    row = "| coalesced loads and stores | at most 4 sectors per request | 4 [ncu] | not on cuda: judged on sim |"
    assert row in text  # reference-cuda was profiled, reference-numba was not
    assert f"Figures marked [ncu] were measured on the GPU by {H100} (`check-labs --ncu-goals`)" in text
    assert "kernel-wide averages where the CPU tier reads its worst line" in text
    assert "traffic the global requests' sectors times 32 bytes over the compulsory bytes" in text
    assert "Active lanes per request are read per SASS instruction from a second launch" in text
    assert "| reference-cuda | cuda | accepted (goals met) | accepted (goals met) | ok | 4 [ncu], 71 |" in text
    assert "| reference-numba | numba | accepted (goals met) | accepted (goals met) | ok | -, 71 |" in text


def test_without_nsight_computes_figures_the_table_says_what_it_said_before(goals_table, tmp_path):
    text = render(goals_table, tmp_path, with_ncu(None))
    row = "| coalesced loads and stores | at most 4 sectors per request | not on cuda: judged on sim |"
    assert row + " not on cuda: judged on sim |" in text
    assert not [line for line in text.splitlines() if line.startswith("|") and "[ncu]" in line]
    assert "Figures marked [ncu]" not in text and "Nsight Compute measured nothing" not in text


def test_a_case_nsight_compute_could_not_measure_says_why_and_keeps_the_old_text(goals_table, tmp_path):
    failed = ncu_goals(reason="Nsight Compute is not installed on this worker")
    skipped = ncu_goals(reason="not profiled: goals are judged on accepted runs only, and this one got wrong_answer")
    text = render(goals_table, tmp_path, with_ncu(failed, off_by_one=skipped))
    assert "Nsight Compute measured nothing for reference-cuda: Nsight Compute is not installed on this worker." in text
    assert "off-by-one" not in text.split("| goal |")[1].split("| sample |")[0]  # not tried, so not a failure
    assert "| not on cuda: judged on sim | not on cuda: judged on sim |" in text
    assert "Figures marked [ncu]" not in text


def test_active_lanes_nsight_compute_measured_show_marked_in_place_of_judged_on_sim(goals_table, tmp_path):
    lanes = {"name": "no warp runs both paths", "metric": "lanes_per_request", "target": 32,
             "comparison": "at least", "measured": 16.0, "met": False}  # fmt: skip
    roof = {"name": "near the FP32 roof", "metric": "roof_percent", "target": 35, "measured": 32.8}
    case = {"lab": "divergence", "case": "in-warp-branch", "language": "numba", "expected": "accepted",
            "got": "accepted (goals missed)", "ok": True, "message": "", "goals": [lanes | {"measured": None}, roof],
            "ncu_goals": {"source": H100, "index": 1, "sizes": {"n": 16777216}, "available": True,
                          "tolerance": 0.1, "lanes_tolerance": 0.01, "goals": [lanes]}}  # fmt: skip
    reference = {**case, "case": "reference-numba", "got": "accepted (goals met)",
                 "ncu_goals": {**case["ncu_goals"], "goals": [lanes | {"measured": 32.0, "met": True}]}}  # fmt: skip
    text = render(goals_table, tmp_path, {"backend": "cuda", "cases": [reference, case]})
    assert "| no warp runs both paths | at least 32 active lanes per request | 32 [ncu] |" in text
    assert "| in-warp-branch | numba | accepted | accepted (goals missed) | ok | 16 [ncu], 32.8 |" in text
