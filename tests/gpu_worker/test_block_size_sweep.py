"""A learner's block-size sweep: the engine plans one more run per other block size, judges those apart from the
exercise's sizes, and draws the curve with the learner's own launch starred.

On the CPU the planning and the judging are exercised directly (the sweep runs only on a GPU lane: simulated
threads time nothing); the messages fed to `GpuReport` are the cuda child's, with stated times.
"""

from __future__ import annotations

from engine_factories import alices_job, vector_add_lab

from gpu_worker.exercise import plan
from gpu_worker.exercise.plan import SWEEP_GPU_BUDGET_S, is_sweep
from gpu_worker.figures.sweep import block_sweep_figure
from gpu_worker.measurement.device_info import DeviceState
from gpu_worker.measurement.gpu_report import GpuReport
from gpu_worker.protocol import CheckInfo, LaunchSpec

CHOICES = vector_add_lab().spec.harness().launch_choices
assert CHOICES is not None


class _NoOtherProcess:
    def state(self) -> DeviceState:
        return DeviceState(other_processes=[], nvml=True)


def _job(block: int = 128, sweep: bool = True, language: str = "numba"):
    launch = CHOICES.launch(block, sweep=sweep)
    return alices_job(vector_add_lab().references[language], language, launch=launch)


def test_a_sweep_on_a_gpu_adds_a_run_per_other_block_size_at_the_largest_size():
    runs = plan.runs(_job(128), "cuda")
    main, points = [r for r in runs if not is_sweep(r)], [r for r in runs if is_sweep(r)]
    largest = vector_add_lab().spec.sizes["cuda"][-1]
    assert len(main) == len(vector_add_lab().spec.sizes["cuda"])
    assert [p["sweep_block"] for p in points] == [32, 64, 256, 512, 1024]
    assert all(p["sizes"] == largest and p["gpu_budget_s"] == SWEEP_GPU_BUDGET_S for p in points)
    assert [p["block"][0] for p in points] == [32, 64, 256, 512, 1024]
    assert points[0]["grid"][0] == -(-largest["n"] // 32)
    assert len({p["seed"] for p in runs}) == len(runs)  # every run its own inputs


def test_no_sweep_on_the_simulator_for_triton_or_when_not_asked():
    assert not any(is_sweep(r) for r in plan.runs(_job(128), "sim"))
    assert not any(is_sweep(r) for r in plan.runs(_job(128, sweep=False), "cuda"))
    assert not any(is_sweep(r) for r in plan.runs(_job(128, language="triton"), "cuda"))


def test_a_block_size_the_lab_does_not_offer_is_left_off_the_curve():
    launch = LaunchSpec(block=["128"], grid=["ceil_div(n, 128)"], sweep_blocks=[100, 128, 64, 64])
    job = alices_job(vector_add_lab().references["numba"], launch=launch)
    assert [r["sweep_block"] for r in plan.runs(job, "cuda") if is_sweep(r)] == [64]


def _report(events: list) -> tuple[GpuReport, list[dict]]:
    job = _job(128)
    runs = plan.runs(job, "cuda")
    checks: list[CheckInfo] = []
    report = GpuReport(job, runs, lambda kind, **f: events.append((kind, f)), checks)
    report.nvml = _NoOtherProcess()  # type: ignore[assignment]
    for index, run in enumerate(runs):
        block = run["block"][0]
        info = CheckInfo(output="c", passed=block != 1024, sizes=run["sizes"])  # wrong at 1024 threads only
        if is_sweep(run):
            report.sweep_checks.setdefault(index, []).append(info)
        else:
            checks.append(info)
        blocks_per_sm = min(32, 2048 // block)
        occupancy = {"driver_blocks_per_sm": blocks_per_sm, "threads_per_block": block}
        report.handle({"type": "occupancy", "index": index, "occupancy": occupancy})
        median_ms = 0.08 if block == 32 else 0.05
        report.handle({"type": "timing", "index": index, "timing": {"median_ms": median_ms, "flags": []}})
    return report, runs


def test_sweep_points_send_no_event_and_leave_the_exercise_s_sizes_as_they_were():
    events: list = []
    report, runs = _report(events)
    main = [i for i, r in enumerate(runs) if not is_sweep(r)]
    assert sorted(report.metrics) == main and sorted(report.timings) == main
    assert {f["index"] for _, f in events} == set(main)  # no timing, metrics or occupancy event for a point
    assert len(report.sweep_metrics) == 4  # five points, one wrong


def test_the_sweep_s_points_are_in_block_order_with_the_learner_s_launch_marked_and_the_wrong_one_untimed():
    report, runs = _report([])
    points = report.block_sweep(max(report.metrics))
    assert [p["block"] for p in points] == [32, 64, 128, 256, 512, 1024]
    assert [p["chosen"] for p in points] == [False, False, True, False, False, False]
    assert points[-1]["correct"] is False and points[-1]["median_seconds"] is None
    assert [p["resident_warps"] for p in points[:2]] == [32.0, 64.0]  # 32 blocks of one warp: half the SM
    assert points[0]["bandwidth"] < points[1]["bandwidth"]

    figure = block_sweep_figure(points, "", "NVIDIA H200 (full GPU), cuda backend")
    assert figure is not None
    names = [t["name"] for t in figure["data"]]
    assert names[-1] == "your launch" and figure["data"][-1]["x"] == [128]
    assert figure["data"][0]["x"] == [32, 64, 128, 256, 512]
    assert "wrong output at 1024 threads" in figure["layout"]["annotations"][0]["text"]
    assert figure["layout"]["title"]["text"].endswith("NVIDIA H200 (full GPU), cuda backend")


def test_a_sweep_with_one_timed_point_draws_nothing_and_a_stopped_sweep_says_where():
    report, _ = _report([])
    points = report.block_sweep(max(report.metrics))
    assert block_sweep_figure(points[:1], "", "x") is None
    figure = block_sweep_figure(points[:3], "at block size 256: the kernel failed", "x")
    assert "the sweep stopped at block size 256" in figure["layout"]["annotations"][0]["text"]


def test_the_judge_keeps_a_point_s_checks_and_its_runtime_error_out_of_the_verdict():
    from gpu_worker.engine.judge import Judge

    job = _job(128)
    runs = plan.runs(job, "cuda")
    sent: list = []
    judge = Judge(job, runs, lambda kind, **f: sent.append(kind))
    judge.gpu = GpuReport(job, runs, lambda kind, **f: None, judge.state.checks)
    judge.trusts_checks = True
    first_point = next(i for i, r in enumerate(runs) if is_sweep(r))
    for index in range(first_point + 1):
        check = {"output": "c", "passed": index != first_point, "message": ""}
        judge({"type": "checked", "index": index, "checks": [check]})
    judge({"type": "runtime_error", "index": first_point + 1, "message": "an illegal memory access"})
    assert judge.state.verdict is None
    assert judge.state.sweep_error == "at block size 64: an illegal memory access"
    assert len(judge.state.checks) == first_point and all(c.passed for c in judge.state.checks)
    assert judge.gpu.sweep_checks[first_point][0].passed is False
    assert sent.count("check") == first_point
    graded = Judge(job, runs, lambda kind, **f: None)
    graded({"type": "runtime_error", "index": 0, "message": "a fault in the graded launch"})
    assert graded.state.verdict == "runtime_error"


def test_a_sweep_asked_for_on_the_cpu_tier_is_said_not_to_run_and_the_job_is_judged_as_usual():
    from gpu_worker.engine import run_job

    events = []
    result = run_job(_job(), events.append, backend="sim")
    said = [e.model_dump().get("message", "") for e in events if e.type == "log"]
    assert result.verdict == "accepted", result.message
    assert any("no block-size sweep on this run: it went to the CPU tier" in m for m in said)
    assert [e.type for e in events].index("log") == [e.type for e in events].index("started") + 1


def test_a_sweep_not_asked_for_or_on_a_gpu_says_nothing():
    assert plan.sweep_refusal(_job(sweep=False), "sim") is None
    assert plan.sweep_refusal(_job(), "cuda") is None
    assert "Triton" in (plan.sweep_refusal(_job(language="triton"), "cuda") or "")
