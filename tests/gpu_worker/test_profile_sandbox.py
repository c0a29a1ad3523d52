"""A profiler in front of the sandboxed child: it starts first, writes a log the learner cannot, and outlives the child.

The profile run's sandbox is checked on the simulator with a stand-in for ncu
(a script that writes its log, runs the child and writes again once the child
has ended, as ncu does); the real ncu runs in tests/gpu_worker/test_gpu_profile.py.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from typing import Any

import pytest
from engine_factories import vector_add_lab

from gpu_worker.isolation import sandbox, uid_pool
from gpu_worker.protocol import Limits

STAND_IN = """
import os, subprocess, sys
log, target = sys.argv[1], sys.argv[2:]
with open(log, "w") as f:
    f.write(f"==PROF== profiler uid {os.getuid()}\\n")
code = subprocess.call(target, close_fds=False)  # as ncu does: the child keeps its pipes
with open(log, "a") as f:
    f.write(f"==PROF== child exited {code}\\n")
"""

LEARNER = """
import os

try:
    with open("{folder}/forged.csv", "w") as f:
        f.write("forged")
    print("FORGED THE LOG")
except OSError as exc:
    print("could not write the log folder:", exc.strerror)

from numba import cuda


@cuda.jit
def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
"""


@pytest.fixture(scope="module")
def profiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One profile-mode child on the simulator, under the stand-in, with a log folder like profiling.py's."""
    tool = tmp_path_factory.mktemp("fake-ncu")
    (tool / "ncu.py").write_text(STAND_IN)
    folder = tmp_path_factory.mktemp("ncu-log")
    folder.chmod(0o700)  # as tempfile.mkdtemp makes it in profiling.py
    log = folder / "ncu.csv"
    exercise = vector_add_lab().exercise_ref("numba")
    request = {
        "backend": "sim",
        "language": "numba",
        "source": textwrap.dedent(LEARNER).replace("{folder}", str(folder)),
        "entry": "vector_add",
        "args": [a.model_dump() for a in exercise.harness.args_for("numba")],
        "runs": [
            {"sizes": {"n": 500}, "seed": 1, "grid": [2, 1, 1], "block": [256, 1, 1], "shared_bytes": 0},
            {"sizes": {"n": 1000}, "seed": 2, "grid": [4, 1, 1], "block": [256, 1, 1], "shared_bytes": 0},
        ],
        "profile": {"index": 1},
        "module_rules": False,  # the learner's code must run, to try the log folder
    }
    messages: list[dict[str, Any]] = []
    run = sandbox.run_sandboxed(
        request,
        Limits(wall_seconds=120),
        "sim",
        messages.append,
        extra_processes=256 + 32,
        wrapper=[sys.executable, str(tool / "ncu.py"), str(log)],
        read_only=[tool],
        writable=[folder],
    )
    return {
        "run": run,
        "messages": messages,
        "log": log.read_text() if log.exists() else "",
        "forged": (folder / "forged.csv").exists(),
        "folder_mode": folder.stat().st_mode & 0o777,
    }


def test_the_profile_child_launches_only_the_chosen_size_and_sends_no_outputs(profiled):
    kinds = [(m["type"], m.get("index")) for m in profiled["messages"]]
    assert ("profiled", 1) in kinds
    assert not any(kind in ("outputs", "memory", "timing") for kind, _ in kinds), kinds
    assert kinds[-1] == ("finished", None)


def test_the_profiler_writes_its_log_after_the_child_has_ended(profiled):
    assert "==PROF== child exited 0" in profiled["log"], profiled["run"].output
    assert not profiled["run"].timed_out


def test_the_learner_still_runs_as_the_jobs_own_uid_under_the_profiler(profiled):
    hello = next(m for m in profiled["messages"] if m["type"] == "hello")
    assert hello["uid"] == profiled["run"].info["uid"] and hello["uid"] in (sandbox.NOBODY, *uid_pool.uid_range())
    assert profiled["run"].info["wrapped_by"] == os.path.basename(sys.executable)


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root worker keeps the profiler's uid apart from the learner's")
def test_the_profiler_runs_as_the_worker_and_the_learner_cannot_write_its_log(profiled):
    result = profiled
    assert "==PROF== profiler uid 0" in result["log"]
    assert result["folder_mode"] == 0o700
    assert not result["forged"]
    assert "could not write the log folder: Permission denied" in result["run"].output


STAND_IN_NCU = """#!{python}
import json, subprocess, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler")
    print("Version 2099.1.0.0 (build 1) (public-release)")
    sys.exit(0)
log = args[args.index("--log-file") + 1]
code = subprocess.call(args[args.index("--log-file") + 2 :], close_fds=False)
with open(log, "w") as f:  # written once the child has ended, as ncu does: what it was asked, then the log
    f.write("==PROF== argv " + json.dumps(args[: args.index("--log-file")]) + "\\n")
    f.write(open("{folder}/captured.csv").read())
"""


def stand_in_ncu(monkeypatch, tmp_path, script: str, name: str, text: str) -> None:
    """`script` as the worker's ncu (WARPLAB_NCU), with `text` in the file `name` beside it; what it writes is
    kept in tmp_path/kept (WARPLAB_NCU_KEEP)."""
    tool = tmp_path / "nsight"
    tool.mkdir()
    (tool / name).write_text(text)
    fake = tool / "ncu"
    fake.write_text(script.replace("{python}", sys.executable).replace("{folder}", str(tool)))
    fake.chmod(0o755)
    monkeypatch.setenv("WARPLAB_NCU", str(fake))
    monkeypatch.setenv("WARPLAB_NCU_KEEP", str(tmp_path / "kept"))


def alices_vector_add() -> tuple[Any, list[dict[str, Any]], dict[str, Any]]:
    """Alice's vector-add job, one small size to profile on the simulator, and the child's request for it."""
    from engine_factories import alices_job

    job = alices_job(vector_add_lab().references["numba"], "numba")
    runs = [{"sizes": {"n": 1000}, "seed": 3, "grid": [4, 1, 1], "block": [256, 1, 1], "shared_bytes": 0}]
    request = {
        "backend": "sim",
        "language": "numba",
        "source": job.source,
        "entry": "vector_add",
        "args": [a.model_dump() for a in job.exercise.harness.args_for("numba")],
        "runs": runs,
    }
    return job, runs, request


def alices_profile(monkeypatch, tmp_path, captured: str, declared: float | None, **asked: Any) -> dict[str, Any]:
    """Alice's vector-add profiled on the simulator under the stand-in ncu, which prints `captured` as its log.

    `WARPLAB_NCU_KEEP` keeps that log, whose first line is the command ncu was given, in tmp_path/kept.
    """
    from gpu_worker import profiling

    stand_in_ncu(monkeypatch, tmp_path, STAND_IN_NCU, "captured.csv", captured)
    job, runs, request = alices_vector_add()
    return profiling._profile(job, runs, request, job.exercise.limits, 0, declared, "NVIDIA H200", "sim", **asked)


def test_alices_profile_reads_the_log_the_profiler_wrote_and_tells_the_excess_traffic(monkeypatch, tmp_path):
    from test_ncu_parse import VECTOR_ADD_LOG

    facts = alices_profile(monkeypatch, tmp_path, VECTOR_ADD_LOG, 100e6)
    assert facts["available"] is True, facts
    assert facts["source"] == "Nsight Compute 2099.1.0.0 on NVIDIA H200"
    assert facts["global_load_sectors_per_request"] == 4
    assert facts["excess_traffic"].startswith("Your kernel moved 2x the bytes it must (201.4 MB measured, 100.0 MB")
    assert facts["explanations"][-1] == facts["excess_traffic"]


def test_the_goals_profile_asks_ncu_for_their_counters_alone_and_judges_its_log(monkeypatch, tmp_path):
    from test_profiled_goals import NO_CONFLICTS, goals_only_log

    from gpu_worker.exercise import profiled_goals
    from gpu_worker.measurement import ncu

    captured = goals_only_log("tiled_32x32")
    facts = alices_profile(monkeypatch, tmp_path, captured, None, sections=(), metrics=ncu.GOAL_METRICS)
    (kept,) = (tmp_path / "kept").iterdir()
    argv = json.loads(kept.read_text().splitlines()[0].removeprefix("==PROF== argv "))
    assert "--section" not in argv and argv[argv.index("--metrics") + 1] == ",".join(ncu.GOAL_METRICS)
    record = profiled_goals.record([NO_CONFLICTS], facts)
    assert record["available"] and record["source"] == "Nsight Compute 2099.1.0.0 on NVIDIA H200"
    assert record["goals"][0]["measured"] == pytest.approx(32.29) and record["goals"][0]["met"] is False


STAND_IN_SOURCE_NCU = """#!{python}
import subprocess, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("Version 2099.1.0.0 (build 1) (public-release)")
    sys.exit(0)
if "--import" in args:  # the worker prints the report's source page, outside the sandbox
    print(open(args[args.index("--import") + 1]).read())
    sys.exit(0)
log = args[args.index("--log-file") + 1]
code = subprocess.call(args[args.index("--log-file") + 2 :], close_fds=False)
with open(args[args.index("--export") + 1] + ".ncu-rep", "w") as f:  # a report: here, the page it will print
    f.write(open("{folder}/page.csv").read())
with open(log, "w") as f:
    f.write(" ".join(args[: args.index("--log-file")]) + "\\n==PROF== Report: lanes.ncu-rep\\n")
"""


def test_the_source_counters_run_profiles_into_a_report_the_worker_then_prints_and_reads(monkeypatch, tmp_path):
    from test_ncu_source_page import IN_WARP_BRANCH

    from gpu_worker import profiling

    stand_in_ncu(monkeypatch, tmp_path, STAND_IN_SOURCE_NCU, "page.csv", IN_WARP_BRANCH)
    job, runs, request = alices_vector_add()
    lanes = profiling.profile_lanes(job, runs, request, 0, device="NVIDIA H100", backend="sim")
    assert lanes["available"] is True, lanes
    assert lanes["source"] == "Nsight Compute 2099.1.0.0 on NVIDIA H100"
    assert [s["lanes"] for s in lanes["sites"]] == [16, 16, 16, 16]
    (kept,) = (tmp_path / "kept").iterdir()  # the page as ncu printed it, for bench/device_session.sh's ncu-lanes
    assert kept.name.endswith("-source.csv") and "Predicated-On Thread Instructions Executed" in kept.read_text()


def test_a_source_counters_run_whose_ncu_fails_says_why(monkeypatch, tmp_path):
    from gpu_worker import profiling

    script = "#!{python}\nimport sys\nprint('==ERROR== ERR_NVGPUCTRPERM')\nsys.exit(1)\n"
    stand_in_ncu(monkeypatch, tmp_path, script, "unused", "")
    job, runs, request = alices_vector_add()
    lanes = profiling.profile_lanes(job, runs, request, 0, device="X", backend="sim")
    assert lanes["available"] is False and lanes["reason"], lanes
