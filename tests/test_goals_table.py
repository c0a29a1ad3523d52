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
