"""`python -m gpu_worker` runs a kernel, checks the labs' samples and tests the worker, without the website."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from engine_factories import ACCEPTED_ON_SIM, vector_add_lab

from gpu_worker.exercise.labspec import find_lab

ROOT = Path(__file__).resolve().parents[2]
LAB = vector_add_lab().folder


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpu_worker", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_run_prints_the_result_as_json_and_events_on_stderr():
    done = cli(
        "run", "--exercise", "vector-add", "--language", "numba", "--source", str(LAB / "reference.py"), "--events"
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["verdict"] == "accepted" and result["backend"] == "sim"
    events = [json.loads(line) for line in done.stderr.splitlines()]
    assert [e["type"] for e in sorted(events, key=lambda e: e["seq"])] == ACCEPTED_ON_SIM


def test_run_exits_0_for_a_verdict_that_is_not_accepted():
    source = str(LAB / "tests" / "syntax-error-numba" / "submission.py")
    done = cli("run", "--exercise", "vector-add", "--language", "numba", "--source", source)
    assert done.returncode == 0 and json.loads(done.stdout)["verdict"] == "compile_error"


def test_run_exits_2_for_usage_errors():
    assert cli("run", "--exercise", "no-such-lab", "--language", "numba", "--source", "x.py").returncode == 2
    assert cli("run", "--exercise", "vector-add", "--language", "numba", "--source", "/no/such/file.py").returncode == 2
    assert cli("run", "--exercise", "vector-add").returncode == 2


def test_check_labs_passes_good_samples_and_fails_on_a_wrong_expectation(tmp_path):
    content = tmp_path / "content"
    module = content / LAB.parent.name
    shutil.copytree(LAB, module / LAB.name, ignore=shutil.ignore_patterns("tests"))
    shutil.copy(LAB.parent / "module.yaml", module / "module.yaml")
    for case in ("syntax-error-numba", "syntax-error-cuda"):
        shutil.copytree(LAB / "tests" / case, module / LAB.name / "tests" / case)
    cases = tmp_path / "cases.json"
    good = cli("check-labs", "--content", str(content), "--jobs", "2", "--json", str(cases))  # a process each
    assert good.returncode == 0, good.stdout
    # each language's reference counts as a sample too
    samples = 2 + len(find_lab("vector-add").spec.languages)
    assert f"{samples} of {samples} sample submissions got their verdict on sim" in good.stdout
    progress = [line for line in good.stdout.splitlines() if line.startswith("[")]  # a line per case as it ends
    assert len(progress) == samples and progress[-1].startswith(f"[{samples}/{samples}] ok")
    written = json.loads(cases.read_text())  # every case in the labs' order, each goal with its measured figure
    in_order = [c.name for c in find_lab("vector-add", content).cases]
    assert written["backend"] == "sim" and [c["case"] for c in written["cases"]] == in_order
    assert written["complete"] is True  # rewritten as each case ends; true once the last has
    reference = next(c for c in written["cases"] if c["case"] == "reference-numba")
    assert reference["ok"] and {"name", "target", "measured", "met"} <= set(reference["goals"][0])
    assert "ncu_goals" not in reference  # only with --ncu-goals
    (module / LAB.name / "tests" / "syntax-error-numba" / "expected.yaml").write_text("verdict: accepted\n")
    bad = cli("check-labs", "--content", str(content))
    assert bad.returncode == 1 and "FAIL vector-add/syntax-error-numba (numba): expected accepted" in bad.stdout


def test_check_labs_measures_goals_under_nsight_compute_only_on_a_gpu():
    done = cli("check-labs", "--backend", "sim", "--ncu-goals", "--lab", "vector-add")
    assert done.returncode == 2 and "--ncu-goals profiles on a GPU: it needs --backend cuda" in done.stderr
    assert "sample submissions" not in done.stdout  # refused before any case ran


def test_a_case_nsight_compute_could_not_measure_says_why_and_keeps_its_verdict(monkeypatch):
    from gpu_worker import cli as check_labs

    monkeypatch.setenv("WARPLAB_NCU", "/no/such/ncu")  # the profile takes the cuda path down to finding ncu
    lab = find_lab("vector-add")
    names = [case.name for case in lab.cases]
    accepted = check_labs._check_case(lab, names.index("reference-numba"), "sim", ncu_goals=True)
    assert accepted.ok and accepted.got == "accepted (goals met)"
    record = accepted.ncu_goals
    assert record["available"] is False and record["reason"] == "Nsight Compute is not installed on this worker"
    assert record["sizes"] == {"n": 16777213}  # the largest GPU size: where the goals are judged
    assert record["goals"][0]["reason"].startswith("coalesced loads and stores: not measured (Nsight Compute is")
    wrong = check_labs._check_case(lab, names.index("off-by-one"), "sim", ncu_goals=True)
    assert wrong.ok and wrong.ncu_goals["reason"].startswith("not profiled: goals are judged on accepted runs only")
    plain = check_labs._check_case(lab, names.index("off-by-one"), "sim")
    assert plain.ncu_goals is None


def test_selftest_runs_the_vector_add_reference():
    done = cli("selftest", "--backend", "sim")
    assert done.returncode == 0 and done.stdout.strip().endswith("ok")


def test_occupancy_is_handed_to_its_own_command_line():
    done = cli("occupancy", "--help")
    assert done.returncode == 0 and "occupancy" in done.stdout.lower()
