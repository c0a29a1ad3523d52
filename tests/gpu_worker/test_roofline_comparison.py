"""The roofline marks this submission, the learner's earlier ones and the reference, all measured on one device."""

from engine_factories import alices_job, module_with, run

from gpu_worker.backends import SIM_DEVICE
from gpu_worker.figures import analysis
from gpu_worker.figures.roofline import roofline_figure
from gpu_worker.protocol import Job, RooflinePoint, WorkSpec
from gpu_worker.science.datasheets import DATASHEETS
from gpu_worker.science.metrics import Ceilings

H200 = Ceilings(source="measured on an H200", copy_bandwidth=4.27e12, fp32=60.6e12)
DEVICE = "NVIDIA H200"
VECTOR_ADD = WorkSpec(bytes="12 * n", flops="n")


def point(rate: float, label: str, device: str = DEVICE, submission_id: int | None = None) -> RooflinePoint:
    return RooflinePoint(intensity=1 / 12, flop_rate=rate, label=label, submission_id=submission_id, device=device)


def per_size(index: int, n: int, rate: float | None, above_roof: bool = False) -> dict:
    return {"index": index, "sizes": {"n": n}, "intensity": 1 / 12, "flop_rate": rate, "above_roof": above_roof}


def traces(fig: dict) -> dict[str, dict]:
    return {t["name"]: t for t in fig["data"]}


def test_it_draws_the_largest_size_the_smaller_ones_the_history_and_the_reference():
    sizes = [point(100e9, "n=1,000,003"), point(200e9, "n=4,194,301"), point(300e9, "n=16,777,213")]
    history = [point(150e9, "#7, 2026-12-01 10:00", submission_id=7), point(120e9, "#5, 2026-11-30 09:00")]
    fig = roofline_figure(
        "NVIDIA H200, cuda backend",
        1 / 12,
        H200,
        DATASHEETS["H200"],
        sizes=sizes,
        history=history,
        reference=point(340e9, "reference (cuda), #3"),
    )
    drawn = traces(fig)
    assert drawn["this submission"]["y"] == [300e9]
    assert drawn["this submission, smaller sizes"]["y"] == [100e9, 200e9]
    assert drawn["your earlier submissions"]["text"] == ["#7, 2026-12-01 10:00", "#5, 2026-11-30 09:00"]
    assert drawn["reference"]["y"] == [340e9]
    for name in ("this submission", "this submission, smaller sizes", "your earlier submissions", "reference"):
        assert "%{text}" in drawn[name]["hovertemplate"] and name in drawn[name]["hovertemplate"]
    assert fig["layout"]["meta"]["source"] == "NVIDIA H200, cuda backend"


def test_the_earlier_submissions_and_this_one_are_joined_oldest_first_as_a_path():
    history = [point(150e9, "#7, step 2"), point(20e9, "#5, step 1")]  # newest first, as the web sends it
    fig = roofline_figure(
        "NVIDIA H200, cuda backend", 1 / 12, H200, sizes=[point(300e9, "n=16,777,213")], history=history
    )
    assert traces(fig)["your path, oldest to this one"]["y"] == [20e9, 150e9, 300e9]
    alone = roofline_figure("NVIDIA H200, cuda backend", 1 / 12, H200, sizes=[point(300e9, "n=16,777,213")])
    assert "your path, oldest to this one" not in traces(alone)


def test_one_timed_size_has_no_smaller_sizes_trace():
    fig = roofline_figure("NVIDIA H200, cuda backend", 1 / 12, H200, sizes=[point(300e9, "n=16,777,213")])
    assert set(traces(fig)) == {"memory roof 4.27 TB/s (measured)", "FP32 roof (measured)", "this submission"}


def test_points_from_another_device_are_left_out():
    metrics = {0: per_size(0, 1000, 90e9), 1: per_size(1, 4000, 310e9)}
    history = [point(150e9, "#7 on this H200"), point(900e9, "#6 on a B200", device="NVIDIA B200")]
    made = analysis.roofline(
        VECTOR_ADD,
        [{"n": 1000}, {"n": 4000}],
        metrics,
        H200,
        DEVICE,
        "NVIDIA H200, cuda backend",
        history,
        point(340e9, "reference on a B200", device="NVIDIA B200"),
    )
    drawn = traces(made["figure"])
    assert drawn["your earlier submissions"]["text"] == ["#7 on this H200"]
    assert "reference" not in drawn
    assert drawn["this submission"]["y"] == [310e9] and drawn["this submission"]["text"] == ["n=4,000"]


def test_a_stored_result_gives_its_largest_timed_size():
    result = {"device": DEVICE, "metrics": {"sizes": [per_size(1, 4000, 310e9), per_size(0, 1000, 90e9)]}}
    found = analysis.result_point(result, "#9", 9)
    assert found == point(310e9, "#9", submission_id=9)


def test_a_stored_result_above_the_roof_or_untimed_gives_no_point():
    above = {"device": DEVICE, "metrics": {"sizes": [per_size(0, 1000, 90e9), per_size(1, 4000, 9e15, True)]}}
    untimed = {"device": DEVICE, "metrics": {"sizes": [per_size(0, 1000, None)]}}
    assert analysis.result_point(above, "#1") is None
    assert analysis.result_point(untimed, "#2") is None
    assert analysis.result_point({"device": DEVICE, "metrics": None}, "#3") is None


def test_a_job_without_history_or_reference_still_validates_and_travels():
    job = alices_job(module_with(""))
    assert job.history == [] and job.reference is None
    job.history = [point(150e9, "#7", submission_id=7)]
    job.reference = point(340e9, "reference (numba), #3", submission_id=3)
    back = Job.model_validate(job.to_wire())
    assert back.history[0].submission_id == 7 and back.reference.label == "reference (numba), #3"


def test_the_engine_draws_the_jobs_history_measured_on_its_device():
    job = alices_job(module_with(""))
    job.history = [point(150e9, "#7 here", device=SIM_DEVICE), point(150e9, "#6 on a GPU")]
    job.reference = point(340e9, "reference here", device=SIM_DEVICE)
    done = run(job)
    assert done.result.verdict == "accepted"
    roofline = next(f for f in done.result.figures if f["title"].startswith("Roofline"))
    drawn = traces(roofline["figure"])
    assert drawn["your earlier submissions"]["text"] == ["#7 here"]
    assert drawn["reference"]["text"] == ["reference here"]
